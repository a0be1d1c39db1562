// The profile of a run: summary, trace-event timeline and timeline page (profile.hpp).
#include "profile/profile.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "ncore/version.hpp"

namespace ncore::sim {

extern const char* const kTimelineHtmlTemplate;  // timeline.html, embedded at build time

namespace {

using json = nlohmann::ordered_json;

bool is_dma(const Stream& s) { return s.engine == isa::Engine::dma; }

// The start-up's track in the trace and on the page.
constexpr const char* kStartUpTrack = "start-up";
constexpr const char* kStartUpDoc =
    "kernel start-up: the NeuronCore's time from the kernel's start to its first instruction (instruction fetch, "
    "queue and semaphore setup); no instruction issues";

// A semaphore field as the listing shows it, followed by the stream that owns the semaphore
// (stream i raises S[i], program.hpp), as neuron-profile names semaphores after their
// producer: "S[5]>=16 (q0)".
std::string sem_text(const Program& prog, const std::string& field, uint32_t sem) {
  if (field.empty() || sem >= prog.streams.size()) return field;
  const Stream& s = prog.streams[sem];
  return fmt::format("{} ({})", field, is_dma(s) ? s.name : profile_engine_name(s));
}

// Bytes a DMA transfer writes to its destination.
uint64_t dma_bytes(const isa::Insn& in) { return ap_elems(in.dst) * isa::dtype_bytes(in.dst.dtype); }

// Multiply-accumulates of a multiply_moving: K (moving partitions, the contraction) x M (PSUM
// destination partitions, the stationary's free size) x N (moving free elements).
uint64_t matmul_macs(const isa::Insn& in) {
  return uint64_t{in.src0.num_part} * in.dst.num_part * ap_free_elems(in.src0);
}

// What every stream did, counted from the records of an RTL run or, for the golden backend,
// from the instructions the golden model executed (every instruction of the Program, once).
struct StreamCount {
  uint64_t instructions = 0;
  std::map<std::string, uint64_t> by_opcode;
  uint64_t dma_bytes = 0;
  uint64_t matmuls = 0, macs = 0;
};

std::vector<StreamCount> count_streams(const ProfileRun& run) {
  const Program& prog = *run.prog;
  std::vector<StreamCount> c(prog.streams.size());
  auto add = [&](uint32_t s, uint32_t i) {
    const isa::Insn& in = prog.streams[s].insns[i].insn;
    StreamCount& k = c[s];
    ++k.instructions;
    ++k.by_opcode[isa::to_string(in.opcode)];
    if (in.opcode == isa::Opcode::dma_copy) k.dma_bytes += dma_bytes(in);
    if (in.opcode == isa::Opcode::multiply_moving) {
      ++k.matmuls;
      k.macs += matmul_macs(in);
    }
  };
  if (run.rtl) {
    // A run that returned completed every instruction it holds a record of.
    for (const InsnRecord& r : run.rtl->records) add(r.stream, r.index);
  } else {
    for (uint32_t s = 0; s < prog.streams.size(); ++s)
      for (uint32_t i = 0; i < prog.streams[s].insns.size(); ++i) add(s, i);
  }
  return c;
}

// Length of the union of intervals [a, b).
uint64_t union_length(std::vector<std::pair<uint64_t, uint64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  uint64_t total = 0, cur_a = 0, cur_b = 0;
  bool open = false;
  for (const auto& [a, b] : iv) {
    if (b <= a) continue;
    if (open && a <= cur_b) {
      cur_b = std::max(cur_b, b);
    } else {
      if (open) total += cur_b - cur_a;
      cur_a = a;
      cur_b = b;
      open = true;
    }
  }
  if (open) total += cur_b - cur_a;
  return total;
}

// A metric: its value, unit and definition, in the order they are added.
class Metrics {
 public:
  void add(const std::string& name, json value, const std::string& unit, const std::string& doc) {
    values_[name] = std::move(value);
    units_[name] = unit;
    docs_[name] = doc;
  }
  json values_ = json::object(), units_ = json::object(), docs_ = json::object();
};

double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

std::string html_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += ch;
    }
  }
  return o;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
}

// Counter series over time, as (cycle, value) points of a step function.
struct Counter {
  std::string name, unit, doc;
  std::vector<std::pair<uint64_t, double>> points;
};

std::vector<Counter> counters(const ProfileRun& run) {
  const Program& prog = *run.prog;
  const RunResult& r = *run.rtl;
  std::vector<Counter> out;

  // Pending DMA transfers: from a transfer's issue (its wait satisfied: the queue takes it and
  // pays the fixed cost) to its completion.
  Counter pend{"pending DMA transfers", "", "DMA transfers issued to their queue and not complete", {}};
  std::map<uint64_t, int64_t> delta;
  for (const InsnRecord& rec : r.records) {
    const isa::Insn& in = prog.streams[rec.stream].insns[rec.index].insn;
    if (in.opcode != isa::Opcode::dma_copy) continue;
    ++delta[rec.issue];
    --delta[rec.end];
  }
  int64_t level = 0;
  pend.points.emplace_back(0, 0.0);
  for (const auto& [t, d] : delta) {
    level += d;
    if (pend.points.back().first == t) pend.points.back().second = static_cast<double>(level);
    else pend.points.emplace_back(t, static_cast<double>(level));
  }
  out.push_back(std::move(pend));

  // Tensor-engine utilisation: the MACs of the multiplies that ran in each interval of `bin`
  // cycles (a multiply's MACs spread evenly over its cycles) over the array's peak, P x P MACs
  // per cycle. And the cumulative figure, mfu_estimated_percent up to that time.
  const uint64_t P = run.preset->num_partitions;
  const uint64_t cycles = std::max<uint64_t>(r.cycles, 1);
  const uint64_t bin = std::max<uint64_t>(64, (cycles + 399) / 400);
  const uint64_t nbins = (cycles + bin - 1) / bin;
  std::vector<double> macs(nbins, 0.0);
  for (const InsnRecord& rec : r.records) {
    const isa::Insn& in = prog.streams[rec.stream].insns[rec.index].insn;
    if (in.opcode != isa::Opcode::multiply_moving || rec.end <= rec.start) continue;
    const double per_cycle = static_cast<double>(matmul_macs(in)) / static_cast<double>(rec.end - rec.start);
    for (uint64_t b = rec.start / bin; b < nbins && b * bin < rec.end; ++b) {
      const uint64_t lo = std::max(rec.start, b * bin), hi = std::min(rec.end, (b + 1) * bin);
      if (hi > lo) macs[b] += per_cycle * static_cast<double>(hi - lo);
    }
  }
  Counter util{"tensor engine utilisation", "%",
               fmt::format("MACs of the multiplies running in each {}-cycle interval over the array's peak ({} x {} "
                           "per cycle)", bin, P, P),
               {}};
  Counter cum{"estimated MFU (cumulative)", "%", "MACs of the multiplies up to the time over P x P x cycles", {}};
  double done = 0;
  for (uint64_t b = 0; b < nbins; ++b) {
    const uint64_t lo = b * bin, width = std::min(cycles, lo + bin) - lo;
    util.points.emplace_back(lo, 100.0 * macs[b] / static_cast<double>(P * P * width));
    done += macs[b];
    cum.points.emplace_back(lo + width, 100.0 * done / static_cast<double>(P * P * (lo + width)));
  }
  util.points.emplace_back(cycles, 0.0);
  out.push_back(std::move(util));
  out.push_back(std::move(cum));
  // A step function needs a point only where its value changes (and its last one).
  for (Counter& c : out) {
    std::vector<std::pair<uint64_t, double>> kept;
    for (size_t i = 0; i < c.points.size(); ++i)
      if (kept.empty() || c.points[i].second != kept.back().second || i + 1 == c.points.size()) kept.push_back(c.points[i]);
    c.points = std::move(kept);
  }
  return out;
}

// The text shown for an instruction: what it is, where it came from, how it waited, when it ran.
struct SliceInfo {
  std::string opcode, insn, source, wait, update;
};

SliceInfo slice_info(const Program& prog, uint32_t s, uint32_t i) {
  const Instruction& ins = prog.streams[s].insns[i];
  const isa::Insn& in = ins.insn;
  SliceInfo d;
  d.opcode = isa::to_string(in.opcode);
  d.insn = format_insn(in);
  if (ins.loc < prog.locations.size()) d.source = fmt::format("{}:{}", prog.locations[ins.loc].file, prog.locations[ins.loc].line);
  d.wait = sem_text(prog, format_wait(in), in.wait_sem);
  d.update = sem_text(prog, format_update(in), in.upd_sem);
  return d;
}

}  // namespace

std::string profile_engine_name(const Stream& s) {
  static const std::map<std::string, std::string> names = {
      {"pe", "tensor"}, {"act", "scalar"}, {"pool", "gpsimd"}, {"dve", "vector"}, {"sp", "sync"}};
  const auto it = names.find(s.name);
  return it == names.end() ? s.name : it->second;
}

std::vector<TimePart> time_breakdown(const RunResult& r) {
  const TimeBreakdown& b = r.breakdown;
  return {
      {"start_up", b.start_up, "the kernel start-up before the first instruction (the preset's kernel_start_ns)"},
      {"compute", b.compute, "an engine (vector, scalar, tensor) has an instruction in flight"},
      {"dma_descriptors", b.dma_descriptors,
       "no engine computes and a DMA engine generates a descriptor (the preset's dma_desc_cycles per partition row)"},
      {"dma_data", b.dma_data, "none of the above and a DMA transfer moves data (DMA and HBM bandwidth, HBM latency)"},
      {"dma_fixed_cost", b.dma_fixed_cost,
       "none of the above and a DMA queue pays a transfer's fixed cost (the preset's dma_fixed_cost_ns)"},
      {"other", b.other, "none of the above: semaphore hand-over between the sequencers"},
  };
}

std::string dominant_part(const RunResult& r) {
  const std::vector<TimePart> parts = time_breakdown(r);
  return std::max_element(parts.begin(), parts.end(), [](const TimePart& a, const TimePart& b) {
           return a.cycles < b.cycles;
         })->name;
}

namespace {

// What the summary's parts share: the run, its stream counts, and how a cycle count becomes a
// figure (null on the golden backend, which has no timing).
struct SummaryCtx {
  const Program& prog;
  const Preset& pre;
  const RunResult* r;
  std::vector<StreamCount> counts;
  double clock_hz;
  uint64_t cycles;
  std::string rtl_only;

  explicit SummaryCtx(const ProfileRun& run_in)
      : prog(*run_in.prog),
        pre(*run_in.preset),
        r(run_in.rtl),
        counts(count_streams(run_in)),
        clock_hz(static_cast<double>(pre.clock_mhz) * 1e6),
        cycles(r ? r->cycles : 0),
        rtl_only(r ? "" : " (null: the golden backend has no timing; run with --backend rtl)") {}

  json seconds(uint64_t cyc) const { return r ? json(static_cast<double>(cyc) / clock_hz) : json(nullptr); }
  template <typename T>
  json timed(T v) const {
    return r ? json(v) : json(nullptr);
  }

  // total_time, total_active_time, the start-up, cycle counts and where the time went.
  void add_time_metrics(Metrics& m) const;
  // Transfers, bytes, queues, descriptor cycles and DMA activity.
  void add_dma_metrics(Metrics& m) const;
  // HBM, SBUF and PSUM byte counters and HBM bandwidth utilisation.
  void add_memory_metrics(Metrics& m) const;
  // Per-engine counts, activity and waits, matmuls and MFU; returns the engines' rows.
  json add_engine_metrics(Metrics& m) const;
  // The DMA queues' rows.
  json dma_queue_rows() const;
};

void SummaryCtx::add_time_metrics(Metrics& m) const {
  m.add("total_time", seconds(cycles), "s",
        "NeuronCore time from the kernel's start to the last instruction's completion, the start-up included "
        "(neuron-profile: execution start to execution end, idle gaps included, host time excluded)" + rtl_only);
  // The first instruction's start: an engine's start, a transfer's first data (after its fixed cost).
  uint64_t first = cycles, last = 0;
  if (r) {
    for (const InsnRecord& rec : r->records) {
      if (prog.streams[rec.stream].insns[rec.index].insn.opcode == isa::Opcode::sem_wait) continue;
      first = std::min(first, rec.start);
      last = std::max(last, rec.end);
    }
  }
  m.add("total_active_time", seconds(last > first ? last - first : 0), "s",
        "from the first instruction's start (an engine's start, a DMA transfer's first data) to the last one's "
        "completion: total_time without the start-up and the first transfer's fixed cost" + rtl_only);
  m.add("kernel_start_time", seconds(r ? r->start_cycles : 0), "s",
        fmt::format("the kernel start-up inside total_time, before any instruction issues ({} ns, the preset's "
                    "kernel_start_ns, in whole clock-enable periods){}", pre.kernel_start_ns, rtl_only));
  m.add("neuroncore_cycle_count", timed(cycles * pre.profile_clock_mhz / pre.clock_mhz), "cycles",
        fmt::format("total_time x the profiler's base clock ({} MHz), as neuron-profile counts it{}", pre.profile_clock_mhz,
                    rtl_only));
  m.add("cycles", timed(cycles), "cycles",
        fmt::format("master-clock (tensor engine, {} MHz) cycles: the simulator's own count{}", pre.clock_mhz, rtl_only));

  // Where total_time went: each cycle counted once, by the first part that holds in it.
  for (const TimePart& p : time_breakdown(r ? *r : RunResult{}))
    m.add(std::string("time_") + p.name, seconds(p.cycles), "s",
          std::string(p.doc) + "; the time_* add up to total_time" + rtl_only);

}

void SummaryCtx::add_dma_metrics(Metrics& m) const {
  uint64_t transfers = 0, dma_total = 0, queues_used = 0;
  for (uint32_t s = 0; s < prog.streams.size(); ++s) {
    if (!is_dma(prog.streams[s])) continue;
    const auto it = counts[s].by_opcode.find("dma_copy");
    const uint64_t n = it == counts[s].by_opcode.end() ? 0 : it->second;
    transfers += n;
    dma_total += counts[s].dma_bytes;
    if (n) ++queues_used;
  }
  m.add("dma_transfer_count", transfers, "", "dma_copy instructions completed (each one transfer, split over the DMA engines)");
  m.add("dma_transfer_total_bytes", dma_total, "B", "bytes the completed transfers wrote to their destinations");
  m.add("dma_transfer_average_bytes", transfers ? dma_total / transfers : 0, "B", "dma_transfer_total_bytes / dma_transfer_count");
  m.add("dma_queue_count", queues_used, "", "DMA queues that served at least one transfer");
  m.add("dma_descriptor_cycles", timed(r ? r->dma_desc_cycles : 0), "cycles",
        "master-clock cycles in which some DMA engine generated a descriptor, counted by the RTL (ncore_dma.sv)" + rtl_only);
  if (r) {
    std::vector<std::pair<uint64_t, uint64_t>> moving;
    for (const InsnRecord& rec : r->records)
      if (prog.streams[rec.stream].insns[rec.index].insn.opcode == isa::Opcode::dma_copy) moving.emplace_back(rec.start, rec.end);
    m.add("dma_active_time_percent", pct(union_length(moving), cycles), "%",
          "time at least one transfer moved data (after its queue's fixed cost), over total_time");
  } else {
    m.add("dma_active_time_percent", nullptr, "%", "time at least one transfer moved data" + rtl_only);
  }

}

void SummaryCtx::add_memory_metrics(Metrics& m) const {
  const std::string counters_doc = r ? "" : " (null: counted by the RTL; run with --backend rtl)";
  m.add("hbm_read_bytes", timed(r ? r->hbm_read_bytes : 0), "B", "bytes the HBM model served to DMA reads (whole 16-byte lines)" + counters_doc);
  m.add("hbm_write_bytes", timed(r ? r->hbm_write_bytes : 0), "B", "bytes the HBM model wrote for DMA writes (enabled bytes)" + counters_doc);
  const std::string acc =
      " of granted accesses, counted in the RTL: engine-port reads count 4 bytes per lane (the 32-bit word the SRAM "
      "delivers, whatever the element size), engine-port writes lanes x enabled bytes";
  m.add("sbuf_read_bytes", timed(r ? r->sbuf_read_bytes : 0), "B", "SBUF bytes read" + acc + ", DMA reads whole 16-byte lines" + counters_doc);
  m.add("sbuf_write_bytes", timed(r ? r->sbuf_write_bytes : 0), "B", "SBUF bytes written" + acc + ", DMA writes their enabled bytes" + counters_doc);
  m.add("psum_read_bytes", timed(r ? r->psum_read_bytes : 0), "B", "PSUM bytes read" + acc + counters_doc);
  m.add("psum_write_bytes", timed(r ? r->psum_write_bytes : 0), "B",
        "PSUM bytes written" + acc + ", tensor-engine results 4 bytes per lane (accumulated or not)" + counters_doc);
  if (r) {
    const double secs = static_cast<double>(cycles) / clock_hz;
    const double bw = static_cast<double>(pre.hbm_bytes_per_us) * 1e6;  // bytes per second
    m.add("mbu_estimated_percent", secs > 0 ? 100.0 * static_cast<double>(r->hbm_read_bytes + r->hbm_write_bytes) / secs / bw : 0.0,
          "%", fmt::format("(hbm_read_bytes + hbm_write_bytes) / total_time over the core's HBM bandwidth ({} GB/s)",
                           pre.hbm_bytes_per_us / 1000));
  } else {
    m.add("mbu_estimated_percent", nullptr, "%", "HBM bandwidth utilisation" + rtl_only);
  }

}

json SummaryCtx::add_engine_metrics(Metrics& m) const {
  json engines = json::array();
  uint64_t matmuls = 0, macs = 0;
  for (uint32_t s = 0; s < prog.streams.size(); ++s) {
    const Stream& st = prog.streams[s];
    if (is_dma(st)) continue;
    const std::string e = profile_engine_name(st);
    const uint64_t active = r ? r->streams.at(s).active_cycles : 0;
    const uint64_t waited = r ? r->streams.at(s).sem_wait_cycles : 0;
    m.add(e + "_instruction_count", counts[s].instructions, "",
          fmt::format("instructions the {} engine's stream ({}) completed, sem_wait (EVENT_SEMAPHORE) included", e, st.name));
    m.add(e + "_engine_active_time_percent", r ? json(pct(active, cycles)) : json(nullptr), "%",
          "cycles with an instruction in the engine (issued, not complete) over total_time; semaphore waits excluded" + rtl_only);
    m.add(e + "_semaphore_wait_time", seconds(waited), "s",
          "time the engine was idle with its next instruction waiting on a semaphore" + rtl_only);
    matmuls += counts[s].matmuls;
    macs += counts[s].macs;
    json ej;
    ej["stream"] = st.name;
    ej["engine"] = e;
    ej["instructions"] = counts[s].instructions;
    ej["by_opcode"] = counts[s].by_opcode;
    ej["active_cycles"] = timed(active);
    ej["semaphore_wait_cycles"] = timed(waited);
    engines.push_back(ej);
  }
  m.add("matmul_instruction_count", matmuls, "", "multiply_moving (MATMUL) instructions completed");
  // neuron-profile: mfu_estimated_percent = 2·MAC / (PE max ops/s x total_time), PE max ops/s =
  // 2 x PEs x clock, i.e. MACs / (P x P x PE-clock cycles). The PE array runs on the master clock
  // here (one MAC per PE per cycle for 16-bit operands), so the denominator is the master-clock
  // cycle count, not neuroncore_cycle_count (at the profiler's base clock, half the PE clock on
  // trn2, which would give 200 % for a full array). fp32 moving operands: the array takes
  // pe_fp32_passes (4) cycles per column, and neuron-profile still counts the model's MACs
  // against the 16-bit peak (each fp32 matmul is two FP32_LO_HI instructions logging half the
  // flops each), so fp32 tops out at 25 %; counted the same way here: MACs once, 16-bit peak.
  const uint64_t P = pre.num_partitions;
  if (r) macs = r->pe_macs;  // what the PE array was given (ncore_pe.sv's counter)
  m.add("mfu_estimated_percent", r ? json(cycles ? 100.0 * static_cast<double>(macs) / static_cast<double>(P * P * cycles) : 0.0) : json(nullptr),
        "%",
        fmt::format("100 x sum over completed multiply_moving of K x M x N MACs / ({} x {} x cycles): the array's peak "
                    "at the master clock, 16-bit rate (fp32 operands run at a quarter of it){}",
                    P, P, rtl_only));
  m.add("matmul_macs", macs, "",
        r ? "multiply-accumulates the PE array was given, counted by the tensor engine (rows x stationary columns of "
            "every moving column)"
          : "K x M x N summed over the multiply_moving instructions");

  return engines;
}

json SummaryCtx::dma_queue_rows() const {
  json queues = json::array();
  for (uint32_t s = 0; s < prog.streams.size(); ++s) {
    const Stream& st = prog.streams[s];
    if (!is_dma(st) || counts[s].instructions == 0) continue;
    json q;
    q["stream"] = st.name;
    q["instructions"] = counts[s].instructions;
    q["by_opcode"] = counts[s].by_opcode;
    q["bytes"] = counts[s].dma_bytes;
    if (r) {
      uint64_t busy = 0, moving = 0;
      for (const InsnRecord& rec : r->records)
        if (rec.stream == s && st.insns[rec.index].insn.opcode == isa::Opcode::dma_copy) {
          busy += rec.end - rec.issue;
          moving += rec.end - rec.start;
        }
      q["busy_cycles"] = busy;
      q["moving_cycles"] = moving;
      q["semaphore_wait_cycles"] = r->streams.at(s).sem_wait_cycles;
    }
    queues.push_back(q);
  }

  return queues;
}

}  // namespace

json profile_summary(const ProfileRun& run) {
  const SummaryCtx c(run);
  const Program& prog = c.prog;
  const Preset& pre = c.pre;
  const RunResult* r = c.r;
  Metrics m;
  c.add_time_metrics(m);
  c.add_dma_metrics(m);
  c.add_memory_metrics(m);
  const json engines = c.add_engine_metrics(m);
  const json queues = c.dma_queue_rows();

  json j;
  j["kernel"] = prog.kernel;
  j["title"] = run.title;
  j["config"] = pre.name;
  j["backend"] = r ? "rtl" : "golden";
  if (r) j["pe_model"] = r->pe_model;
  j["model_version"] = version();
  j["model_revision"] = revision();
  j["clock_mhz"] = pre.clock_mhz;
  j["profile_clock_mhz"] = pre.profile_clock_mhz;
  j["summary"] = m.values_;
  j["units"] = m.units_;
  j["definitions"] = m.docs_;
  j["engines"] = engines;
  j["dma_queues"] = queues;
  if (r) {
    json parts = json::object();
    for (const TimePart& p : time_breakdown(*r)) parts[p.name] = p.cycles;
    j["time_breakdown_cycles"] = parts;
    j["dominant"] = dominant_part(*r);
  }
  if (!r) j["note"] = "golden backend: counts only; times, cycles and memory byte counters need --backend rtl";
  return j;
}

std::string profile_summary_text(const json& j) {
  std::string out = fmt::format("profile: {} ({}) config={} backend={}{}\n", j.value("kernel", ""), j.value("title", ""),
                                j.value("config", ""), j.value("backend", ""),
                                j.contains("pe_model") ? " pe_model=" + j.at("pe_model").get<std::string>() : "");
  const json& v = j.at("summary");
  const json& units = j.at("units");
  std::map<std::string, const json*> engines;
  for (const json& e : j.at("engines")) engines[e.at("engine").get<std::string>() + "_instruction_count"] = &e;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string unit = units.value(it.key(), "");
    std::string val;
    if (it->is_null()) {
      val = "n/a";
    } else if (it->is_number_float()) {
      const double d = it->get<double>();
      if (unit == "s") val = fmt::format("{:.6g} s ({:.3f} us)", d, d * 1e6);
      else if (unit == "%") val = fmt::format("{:.2f} %", d);
      else val = fmt::format("{:.6g}", d);
    } else {
      val = it->dump();
      if (!unit.empty() && unit != "%") val += " " + unit;
    }
    if (auto e = engines.find(it.key()); e != engines.end() && !e->second->at("by_opcode").empty()) {
      std::string ops;
      for (auto op = e->second->at("by_opcode").begin(); op != e->second->at("by_opcode").end(); ++op)
        ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", op.key(), op->dump());
      val += " (" + ops + ")";
    }
    out += fmt::format("  {:<40} {}\n", it.key(), val);
  }
  if (j.at("backend") == "rtl") {
    out += "  sbuf/psum bytes count granted accesses in the RTL: engine reads 4 bytes per lane (the 32-bit word),\n"
           "  engine writes lanes x enabled bytes, DMA reads whole 16-byte lines, DMA writes enabled bytes\n";
  } else {
    out += "  golden backend: counts only; times, cycles and memory byte counters need --backend rtl\n";
  }
  return out;
}

std::vector<ProfileTrack> profile_tracks(const ProfileRun& run) {
  const Program& prog = *run.prog;
  if (!run.rtl) throw SimError("the timeline needs an RTL run");
  const RunResult& r = *run.rtl;
  std::vector<std::vector<const InsnRecord*>> per(prog.streams.size());
  for (const InsnRecord& rec : r.records) per.at(rec.stream).push_back(&rec);
  std::vector<ProfileTrack> tracks;
  auto layout = [&](uint32_t s, bool dma, const std::string& name, std::vector<ProfileSlice> slices) {
    // Lanes: each slice in the first lane free at its start (an in-order engine needs one).
    std::stable_sort(slices.begin(), slices.end(), [](const ProfileSlice& a, const ProfileSlice& b) {
      return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
    std::vector<ProfileTrack> lanes;
    std::vector<uint64_t> lane_end;
    for (const ProfileSlice& sl : slices) {
      size_t k = 0;
      while (k < lanes.size() && lane_end[k] > sl.start) ++k;
      if (k == lanes.size()) {
        ProfileTrack t;
        t.name = k == 0 ? name : fmt::format("{} #{}", name, k + 1);
        t.stream = s;
        t.lane = static_cast<unsigned>(k);
        t.dma = dma;
        lanes.push_back(std::move(t));
        lane_end.push_back(0);
      }
      lanes[k].slices.push_back(sl);
      lane_end[k] = std::max(lane_end[k], sl.end);
    }
    if (lanes.empty()) {
      ProfileTrack t;
      t.name = name;
      t.stream = s;
      t.dma = dma;
      lanes.push_back(std::move(t));
    }
    for (auto& t : lanes) tracks.push_back(std::move(t));
  };
  // Engines first (every engine, idle ones too), then the DMA queues that have work.
  for (uint32_t s = 0; s < prog.streams.size(); ++s) {
    const Stream& st = prog.streams[s];
    if (is_dma(st)) continue;
    std::sort(per[s].begin(), per[s].end(), [](auto* a, auto* b) { return a->index < b->index; });
    std::vector<ProfileSlice> slices;
    uint64_t free = 0;  // when the engine finished what was issued before
    for (const InsnRecord* rec : per[s]) {
      if (st.insns[rec->index].insn.opcode == isa::Opcode::sem_wait) {
        // A sem_wait as the engine sees it: from when the engine is free and the sequencer
        // holds the wait to when it holds (zero cycles if it held before the engine was free).
        slices.push_back({std::max(rec->ready, free), std::max(rec->issue, free), s, rec->index});
      } else {
        slices.push_back({rec->start, std::max(rec->end, rec->start), s, rec->index});
        free = std::max(free, rec->end);
      }
    }
    layout(s, false, profile_engine_name(st), std::move(slices));
  }
  for (uint32_t s = 0; s < prog.streams.size(); ++s) {
    const Stream& st = prog.streams[s];
    if (!is_dma(st) || per[s].empty()) continue;
    std::vector<ProfileSlice> slices;
    // A transfer from its issue (the queue takes it and it pays the fixed cost, then waits for the
    // transfer before it on the queue) to completion; a queue's transfers may overlap.
    for (const InsnRecord* rec : per[s]) slices.push_back({rec->issue, std::max(rec->end, rec->issue), s, rec->index});
    layout(s, true, st.name, std::move(slices));
  }
  return tracks;
}

json profile_trace(const ProfileRun& run) {
  const Program& prog = *run.prog;
  const Preset& pre = *run.preset;
  const RunResult& r = *run.rtl;
  const std::vector<ProfileTrack> tracks = profile_tracks(run);
  std::map<std::pair<uint32_t, uint32_t>, const InsnRecord*> recs;
  for (const InsnRecord& rec : r.records) recs[{rec.stream, rec.index}] = &rec;
  const double mhz = static_cast<double>(pre.clock_mhz);
  auto us = [&](uint64_t c) { return static_cast<double>(c) / mhz; };  // trace-event time: microseconds

  json ev = json::array();
  const int pid = 1;
  ev.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"},
                {"args", {{"name", fmt::format("ncore {} {} ({})", pre.name, prog.kernel, run.title)}}}});
  int tid = 0;
  if (r.start_cycles > 0) {  // the start-up, its own track first
    ++tid;
    ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", kStartUpTrack}}}});
    ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_sort_index"}, {"args", {{"sort_index", tid}}}});
    ev.push_back({{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"name", kStartUpTrack}, {"cat", "startup"}, {"ts", 0.0},
                  {"dur", us(r.start_cycles)}, {"args", {{"cycles", {{"start", 0}, {"end", r.start_cycles}}}, {"doc", kStartUpDoc}}}});
  }
  for (const ProfileTrack& t : tracks) {
    ++tid;
    ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", t.name}}}});
    ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_sort_index"}, {"args", {{"sort_index", tid}}}});
    for (const ProfileSlice& sl : t.slices) {
      const InsnRecord& rec = *recs.at({sl.stream, sl.index});
      const isa::Insn& in = prog.streams[sl.stream].insns[sl.index].insn;
      const SliceInfo d = slice_info(prog, sl.stream, sl.index);
      json a;
      a["stream"] = prog.streams[sl.stream].name;
      a["pc"] = sl.index;
      a["instruction"] = d.insn;
      a["source"] = d.source;
      a["wait"] = d.wait.empty() ? json(nullptr) : json(d.wait);
      a["update"] = d.update.empty() ? json(nullptr) : json(d.update);
      a["cycles"] = {{"ready", rec.ready}, {"issue", rec.issue}, {"start", rec.start}, {"end", rec.end}};
      a["semaphore_wait_cycles"] = rec.issue - rec.ready;
      if (in.opcode == isa::Opcode::dma_copy) {
        a["bytes"] = dma_bytes(in);
        a["fixed_cost_cycles"] = rec.start - rec.issue;  // and any wait for the transfer before it on the queue
      }
      if (in.opcode == isa::Opcode::multiply_moving) a["macs"] = matmul_macs(in);
      ev.push_back({{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"name", d.opcode}, {"cat", t.dma ? "dma" : "engine"},
                    {"ts", us(sl.start)}, {"dur", us(sl.end) - us(sl.start)}, {"args", a}});
    }
  }
  for (const Counter& c : counters(run)) {
    const std::string key = c.unit == "%" ? "percent" : "count";
    for (const auto& [t, v] : c.points)
      ev.push_back({{"ph", "C"}, {"pid", pid}, {"name", c.name}, {"ts", us(t)}, {"args", {{key, v}}}});
  }
  json j;
  j["displayTimeUnit"] = "ns";
  j["otherData"] = {{"kernel", prog.kernel},
                    {"title", run.title},
                    {"config", pre.name},
                    {"pe_model", r.pe_model},
                    {"clock_mhz", pre.clock_mhz},
                    {"cycles", r.cycles},
                    {"start_cycles", r.start_cycles},
                    {"note", "ts and dur in microseconds of device time from the kernel's start; args.cycles in "
                             "master-clock cycles; the start-up track holds the kernel start-up; an engine "
                             "slice runs from the engine's start to completion, a sem_wait from when the engine was free "
                             "to when its wait held, a DMA transfer from its issue (fixed cost first) to completion"}};
  j["traceEvents"] = std::move(ev);
  return j;
}

std::string profile_timeline_html(const ProfileRun& run) {
  const Program& prog = *run.prog;
  const Preset& pre = *run.preset;
  const RunResult& r = *run.rtl;
  std::map<std::pair<uint32_t, uint32_t>, const InsnRecord*> recs;
  for (const InsnRecord& rec : r.records) recs[{rec.stream, rec.index}] = &rec;

  // The page's data: rows of slices [start, end, opcode, detail, fixed-cost end] in cycles,
  // with the strings in tables.
  json ops = json::array(), details = json::array(), rows = json::array();
  std::map<std::string, size_t> op_index;
  if (r.start_cycles > 0) {
    op_index.emplace(kStartUpTrack, 0);
    ops.push_back(kStartUpTrack);
    details.push_back(fmt::format("{}\ncycles: 0 .. {}", kStartUpDoc, r.start_cycles));
    rows.push_back({{"name", kStartUpTrack}, {"kind", "startup"}, {"slices", json::array({json::array({0, r.start_cycles, 0, 0})})}});
  }
  for (const ProfileTrack& t : profile_tracks(run)) {
    json sl = json::array();
    for (const ProfileSlice& s : t.slices) {
      const InsnRecord& rec = *recs.at({s.stream, s.index});
      const isa::Insn& in = prog.streams[s.stream].insns[s.index].insn;
      const SliceInfo d = slice_info(prog, s.stream, s.index);
      auto [it, fresh] = op_index.emplace(d.opcode, op_index.size());
      if (fresh) ops.push_back(d.opcode);
      std::string text = fmt::format("{}[{}]  {}\nsource: {}", prog.streams[s.stream].name, s.index, d.insn,
                                     d.source.empty() ? "?" : d.source);
      if (!d.wait.empty()) text += "\nwaits on: " + d.wait;
      if (!d.update.empty()) text += "\nupdates: " + d.update;
      text += fmt::format("\ncycles: ready {}  issue {}  start {}  end {}", rec.ready, rec.issue, rec.start, rec.end);
      if (in.opcode == isa::Opcode::dma_copy)
        text += fmt::format("\n{} bytes; fixed cost {} cycles", dma_bytes(in), rec.start - rec.issue);
      if (in.opcode == isa::Opcode::multiply_moving) text += fmt::format("\n{} MACs", matmul_macs(in));
      details.push_back(text);
      json row = {s.start, s.end, it->second, details.size() - 1};
      if (in.opcode == isa::Opcode::dma_copy) row.push_back(rec.start);
      sl.push_back(row);
    }
    rows.push_back({{"name", t.name}, {"kind", t.dma ? "dma" : "engine"}, {"slices", sl}});
  }
  json cnt = json::array();
  for (const Counter& c : counters(run)) {
    json pts = json::array();
    for (const auto& [t, v] : c.points) pts.push_back({t, std::round(v * 1000.0) / 1000.0});
    cnt.push_back({{"name", c.name}, {"unit", c.unit}, {"doc", c.doc}, {"points", pts}});
  }
  json data = {{"title", fmt::format("{} ({}) on {}", prog.kernel, run.title, pre.name)},
               {"clock_mhz", pre.clock_mhz},
               {"cycles", r.cycles},
               {"ops", ops},
               {"details", details},
               {"rows", rows},
               {"counters", cnt}};
  std::string blob = data.dump();
  replace_all(blob, "<", "\\u003c");  // '<' only occurs inside strings: keeps </script> out of the page
  std::string page = kTimelineHtmlTemplate;
  replace_all(page, "__NCORE_TITLE__", html_escape(data["title"].get<std::string>()));
  replace_all(page, "__NCORE_DATA__", blob);
  return page;
}

std::string write_profile(const std::string& name, const ProfileRun& run) {
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw InputError(fmt::format("--profile: cannot open {} for writing", path));
    out << text;
    if (!out) throw InputError(fmt::format("--profile: cannot write {}", path));
  };
  const json summary = profile_summary(run);
  write(name + ".summary.json", summary.dump(2) + "\n");
  std::string text = profile_summary_text(summary);
  if (run.rtl) {
    write(name + ".trace.json", profile_trace(run).dump() + "\n");
    write(name + ".timeline.html", profile_timeline_html(run));
    text += fmt::format("  wrote {0}.summary.json, {0}.trace.json (chrome://tracing, ui.perfetto.dev), {0}.timeline.html\n", name);
  } else {
    text += fmt::format("  wrote {0}.summary.json (no timeline: the golden backend has no timing)\n", name);
  }
  return text;
}

}  // namespace ncore::sim
