// ncore-sim's report, JSON and records. See report.hpp.
#include "cli/report.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "ncore/error.hpp"
#include "ncore/preset_values.hpp"
#include "ncore/version.hpp"
#include "profile/profile.hpp"

namespace ncore::cli {
namespace {

bool on_rtl(const run::KernelRun& r) { return r.result.backend == run::Backend::rtl; }

// The tensor engine's utilisation over the run: MACs over 128 x 128 x cycles.
double pe_utilisation(const run::KernelRun& r) {
  const uint64_t pe_count = uint64_t{r.preset->num_partitions} * r.preset->num_partitions;
  const auto& s = r.result.stats;
  return s.cycles ? 100.0 * static_cast<double>(s.pe_macs) / static_cast<double>(pe_count * s.cycles) : 0.0;
}

}  // namespace

void print_report(std::ostream& out, const Options& o, const run::KernelRun& r) {
  const auto& s = r.result.stats;
  const bool rtl = on_rtl(r);
  const std::string what_if = preset_values_text();
  out << fmt::format("kernel {} {} dtype={} config={}{} backend={}\n", r.kernel->name, r.values.text(), o.dtype,
                     r.preset->name, what_if.empty() ? "" : " (what-if: " + what_if + ")",
                     run::to_string(r.result.backend));
  if (!r.checked)
    out << "Correctness passed? not checked (--no-reference)\n";
  else
    out << "Correctness passed? " << (r.correct ? "True" : "False") << "\n";
  for (const auto& [name, c] : r.compare) {
    const std::string which = r.compare.size() > 1 ? name + ": " : "";
    if (!c.close)
      out << fmt::format("  {}{} of {} elements differ from the reference (first at index {}, max abs error {:g})\n",
                         which, c.mismatches, c.elements, c.first, c.max_abs_err);
    if (!r.kernel->exact)  // say which bound the sums were held to, and how close they came to it
      out << fmt::format("  {}compared with {}; max abs error {:g}, {:.3g} of its bound\n", which, c.rule,
                         c.max_abs_err, c.max_bound_ratio);
  }
  if (rtl)
    out << fmt::format("Latency: {} cycles = {:.3f} us at {} MHz (from kernel start: {:.3f} us start-up, then the "
                       "instructions)\n",
                       s.cycles, s.time_us, r.preset->clock_mhz,
                       static_cast<double>(s.start_cycles) / static_cast<double>(r.preset->clock_mhz));
  out << "dma_transfer_count: " << s.dma_transfers << "\n";
  out << "instructions: " << s.instructions;
  if (o.check && rtl) out << " (" << s.checked_instructions << " checked against the golden model)";
  out << "\n";
  if (rtl && s.pe_macs > 0)
    out << fmt::format("Tensor engine: {} MACs, {:.1f}% of the array's peak over the run\n", s.pe_macs, pe_utilisation(r));
  if (rtl)
    out << fmt::format("simulated in {:.2f} s ({} cycles clocked, {} idle cycles skipped, {} thread{}, {} PE array)\n",
                       s.wall_seconds, s.evaluated_cycles, s.skipped_cycles, r.result.threads,
                       r.result.threads == 1 ? "" : "s", s.pe_model);
}

void write_json(const std::string& path, const Options& o, const run::KernelRun& r) {
  const auto& s = r.result.stats;
  const bool rtl = on_rtl(r);
  nlohmann::ordered_json j;
  j["kernel"] = r.kernel->name;
  for (const auto& [name, value] : r.values.items()) j[name] = value;
  j["dtype"] = o.dtype;
  j["config"] = r.preset->name;
  j["preset_set"] = preset_values_text();  // what-if values ("" none)
  j["backend"] = run::to_string(r.result.backend);
  j["model_version"] = version();
  j["model_revision"] = revision();
  if (r.checked) {
    j["correct"] = r.correct;
    j["bit_exact"] = r.exact;
    for (const auto& [name, c] : r.compare) {
      auto& e = j["compare"][name];
      e["rule"] = c.rule;
      e["mismatches"] = c.mismatches;
      e["max_abs_err"] = c.max_abs_err;
      if (!r.kernel->exact) e["max_bound_ratio"] = c.max_bound_ratio;  // the largest error's share of the bound
    }
  } else {
    j["correct"] = nullptr;
    j["bit_exact"] = nullptr;
  }
  if (rtl) {
    j["cycles"] = s.cycles;
    j["time_us"] = s.time_us;
    j["clock_mhz"] = r.preset->clock_mhz;
    j["start_cycles"] = s.start_cycles;
    nlohmann::ordered_json parts = nlohmann::ordered_json::object();
    for (const sim::TimePart& p : sim::time_breakdown(s)) parts[p.name] = p.cycles;
    j["time_breakdown_cycles"] = parts;
    j["dominant"] = sim::dominant_part(s);
    j["dma_desc_cycles"] = s.dma_desc_cycles;
  } else {
    j["cycles"] = nullptr;
    j["time_us"] = nullptr;
  }
  j["dma_transfer_count"] = s.dma_transfers;
  j["instructions"] = s.instructions;
  j["checked_instructions"] = s.checked_instructions;
  j["hbm_read_bytes"] = s.hbm_read_bytes;
  j["hbm_write_bytes"] = s.hbm_write_bytes;
  if (rtl) {
    j["pe_macs"] = s.pe_macs;
    j["pe_utilization_percent"] = pe_utilisation(r);
    j["pe_array_busy_cycles"] = s.pe_array_busy_cycles;
  }
  j["evaluated_cycles"] = s.evaluated_cycles;
  j["skipped_cycles"] = s.skipped_cycles;
  j["wall_seconds"] = s.wall_seconds;
  if (rtl) j["rtl_threads"] = r.result.threads;
  if (rtl) j["pe_model"] = s.pe_model;
  std::ofstream out(path);
  if (!out) throw InputError(fmt::format("--json {}: cannot open for writing", path));
  out << j.dump(2) << "\n";
}

void write_records(const std::string& path, const run::KernelRun& r) {
  std::ofstream out(path);
  if (!out) throw InputError(fmt::format("--records {}: cannot open for writing", path));
  const Program& prog = r.program;
  out << "stream,index,opcode,ready,issue,start,end,source\n";
  for (const auto& rec : r.result.stats.records) {
    const auto& in = prog.streams[rec.stream].insns[rec.index];
    const auto& loc = prog.locations.at(in.loc);
    out << fmt::format("{},{},{},{},{},{},{},{}:{}\n", prog.streams[rec.stream].name, rec.index,
                       isa::to_string(in.insn.opcode), rec.ready, rec.issue, rec.start, rec.end, loc.file, loc.line);
  }
}

}  // namespace ncore::cli
