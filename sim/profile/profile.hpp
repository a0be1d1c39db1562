// The profile of a run (ncore-sim --profile NAME): a summary with neuron-profile's metric
// names, a timeline in the Chrome/Perfetto trace-event format, and a self-contained HTML page
// that draws that timeline.
//
// Every figure is counted from what the run did: instruction counts and times from the
// sequencers' per-instruction records (RunResult::records, StreamStats), HBM bytes from the
// HBM model, SBUF and PSUM bytes from the RTL's counters (ncore_sbuf.sv, ncore_psum.sv).
// Nothing is estimated from the Program's text.
//
// The golden backend has no timing and no RTL: its summary holds the counts (instructions per
// engine and opcode, DMA transfers and their bytes, matmuls) and null for every time, cycle,
// SBUF/PSUM and HBM figure; no trace or timeline is written for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/core_sim.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"

namespace ncore::sim {

struct ProfileRun {
  const Program* prog = nullptr;
  const Preset* preset = nullptr;
  // The RTL run's result; null for the golden backend (counts only).
  const RunResult* rtl = nullptr;
  std::string title;  // what ran, e.g. "stream n=25600 free_dim=200 dtype=fp32"
};

// neuron-profile's name of the engine a stream feeds ("pe" -> "tensor", "dve" -> "vector",
// "act" -> "scalar", "pool" -> "gpsimd", "sp" -> "sync"); any other stream keeps its own name.
std::string profile_engine_name(const Stream& s);

// One slice of the timeline: an instruction of `stream` (its position `index`) occupying
// cycles [start, end) of a track.
struct ProfileSlice {
  uint64_t start = 0, end = 0;
  uint32_t stream = 0, index = 0;
};

// A track of the timeline: an engine (lane 0, and more lanes only where an engine runs
// instructions at once, as the tensor engine's load in the shadow of a multiply) or a DMA
// queue. Slices never overlap within a track.
struct ProfileTrack {
  std::string name;  // "vector", "tensor", "tensor #2", "q0", ...
  uint32_t stream = 0;
  unsigned lane = 0;
  bool dma = false;
  std::vector<ProfileSlice> slices;  // in time order
};

// A part of a run's time breakdown (RunResult::breakdown): its name, cycles and definition.
struct TimePart {
  const char* name;
  uint64_t cycles;
  const char* doc;
};
// The breakdown's parts in the order they are tried for each cycle; their cycles add up to the
// run's. `part` names the one with the most cycles ("what dominates").
std::vector<TimePart> time_breakdown(const RunResult& r);
std::string dominant_part(const RunResult& r);

// The summary as JSON: {"kernel", "title", "config", "backend", "summary": {metric: value},
// "units": {metric: unit}, "definitions": {metric: text}, "engines": [...], "dma_queues": [...]}.
nlohmann::ordered_json profile_summary(const ProfileRun& run);
// The summary as text, one metric per line (neuron-profile's summary-text, in spirit).
std::string profile_summary_text(const nlohmann::ordered_json& summary);

// The tracks (RTL runs only).
std::vector<ProfileTrack> profile_tracks(const ProfileRun& run);
// The trace-event JSON (RTL runs only): one thread per track, slices as complete ("X")
// events, counters ("C") for pending DMA transfers and tensor-engine utilisation.
nlohmann::ordered_json profile_trace(const ProfileRun& run);
// The self-contained timeline page (RTL runs only): no network access, inline script and style.
std::string profile_timeline_html(const ProfileRun& run);

// Writes NAME.summary.json and, for an RTL run, NAME.trace.json and NAME.timeline.html.
// Returns the text summary. Throws InputError when a file cannot be written.
std::string write_profile(const std::string& name, const ProfileRun& run);

}  // namespace ncore::sim
