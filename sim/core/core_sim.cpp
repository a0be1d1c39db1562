// Core::get: the per-preset SystemC top levels, all elaborated before the first run because
// SystemC allows one elaboration per process.
#include <algorithm>
#include <map>
#include <memory>
#include <thread>

#include <verilated.h>

#include <fmt/format.h>

#include "core/core_presets.hpp"
#include "core/core_sim.hpp"
#include "ncore/error.hpp"
#include "ncore/isa_gen.hpp"
#include "trace/rtl_assert.hpp"

namespace ncore::sim {
namespace {

struct Builder {
  const char* preset;
  unsigned threads;
  Core* (*make)(const Preset&);
};
constexpr Builder kBuilders[] = {{"trn2", 1, make_core_trn2},
#if !defined(NCORE_COVERAGE)  // the coverage build has trn2 and tiny only (sim/CMakeLists.txt)
                                 {"trn2", 2, make_core_trn2_mt}, {"trn1", 1, make_core_trn1},
#endif
                                 {"tiny", 1, make_core_tiny}};

const Builder* find_builder(const std::string& preset, unsigned threads) {
  for (const auto& b : kBuilders)
    if (preset == b.preset && threads == b.threads) return &b;
  return nullptr;
}

// Every preset's core, built on the first call with the thread count asked for then.
std::map<std::string, std::unique_ptr<Core>>& cores(unsigned threads) {
  static std::map<std::string, std::unique_ptr<Core>> m = [threads] {
    // A Verilated model on N threads needs a context with N threads, set before any model exists.
    if (threads > 1) Verilated::defaultContextp()->threads(threads);
    std::map<std::string, std::unique_ptr<Core>> all;
    for (const auto& b : kBuilders) {
      if (all.count(b.preset)) continue;
      const Builder* pick = find_builder(b.preset, threads);
      if (!pick) pick = find_builder(b.preset, 1);
      const Preset* p = find_preset(pick->preset);
      if (!p) throw SimError(fmt::format("preset {} is not defined", pick->preset));
      all[pick->preset].reset(pick->make(*p));
    }
    return all;
  }();
  // Coverage builds: the counts are written at exit, by a handler registered now that the cores
  // exist, so that it runs before they are destroyed.
  rtl::write_coverage_at_exit();
  return m;
}

}  // namespace

Core& Core::get(const Preset& preset, unsigned threads) {
  if (!find_builder(preset.name, 1))
    throw SimError(fmt::format("preset '{}' has no RTL model in this simulator (available: {})", preset.name,
                               fmt::join(available_presets(), ", ")));
  if (!find_builder(preset.name, threads))
    throw SimError(fmt::format("preset '{}' has no {}-thread RTL model in this simulator (its models run on {} "
                               "thread(s))",
                               preset.name, threads, fmt::join(thread_counts(preset.name), " or ")));
  Core& c = *cores(threads).at(preset.name);
  if (c.threads() != threads)
    throw SimError(fmt::format("this process built the {} core on {} thread(s) and SystemC elaborates once per "
                               "process: a run on {} thread(s) needs a new process",
                               preset.name, c.threads(), threads));
  return c;
}

std::vector<std::string> Core::available_presets() {
  std::vector<std::string> v;
  for (const auto& b : kBuilders)
    if (std::find(v.begin(), v.end(), b.preset) == v.end()) v.emplace_back(b.preset);
  return v;
}

std::vector<unsigned> Core::thread_counts(const std::string& preset) {
  std::vector<unsigned> v;
  for (const auto& b : kBuilders)
    if (preset == b.preset) v.push_back(b.threads);
  return v;
}

unsigned Core::auto_threads(const Preset& preset, const Program& prog) {
  if (!find_builder(preset.name, 2) || std::thread::hardware_concurrency() < 2) return 1;
  const auto pe = static_cast<unsigned>(StreamKind::pe);
  if (prog.streams.size() <= pe) return 1;
  for (const auto& in : prog.streams[pe].insns)
    if (in.insn.opcode == isa::Opcode::multiply_moving) return 2;
  return 1;
}

}  // namespace ncore::sim
