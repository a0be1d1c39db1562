// What-if hardware (preset_values.hpp): the table's presets with the values set. A shared library
// of its own, like the stop request, so that a process has one set of values however many of its
// modules link the firmware.
#include "ncore/preset_values.hpp"

#include <cstdlib>
#include <deque>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "ncore/error.hpp"

namespace ncore {
namespace {

struct State {
  std::mutex m;
  bool env_read = false;
  bool fixed = false;                                    // a preset was looked up: the values hold
  std::vector<std::pair<std::string, uint64_t>> values;  // in the order given
  std::deque<Preset> presets;                            // the table's presets with the values, made once
};

State& state() {
  static State s;
  return s;
}

// Other names of a parameter, as the hardware's users say them: the tensor engine is
// num_partitions x num_partitions.
std::string canonical(const std::string& name) {
  if (name == "pe_rows" || name == "pe_columns" || name == "pe_cols" || name == "partitions") return "num_partitions";
  return name;
}

const PresetParam* param_named(const std::string& name) {
  for (const auto& p : kPresetParams)
    if (name == p.name) return &p;
  return nullptr;
}

// The RTL's rules for its parameters (also isagen's for the table), on a preset with the values set;
// the first one broken, or "".
std::string rtl_rule_broken(const Preset& p) {
  if (p.num_partitions < 1 || p.dma_engines < 1 || p.num_partitions % p.dma_engines != 0)
    return fmt::format("num_partitions ({}) must be a multiple of dma_engines ({}): each DMA engine owns as many "
                       "partitions", p.num_partitions, p.dma_engines);
  if (p.num_partitions > 128) return fmt::format("num_partitions ({}) must be at most 128 (the ISA's partition field)",
                                                 p.num_partitions);
  if (p.dma_engines > 32 || p.dma_queues < 1 || p.dma_queues > 32)
    return fmt::format("dma_engines ({}) and dma_queues ({}) must be 1 to 32 (the per-engine and per-queue masks)",
                       p.dma_engines, p.dma_queues);
  if (p.sbuf_line_bytes < 1 || p.sbuf_bytes % p.sbuf_line_bytes != 0)
    return fmt::format("sbuf_bytes ({}) must be a multiple of sbuf_line_bytes ({})", p.sbuf_bytes, p.sbuf_line_bytes);
  if (p.psum_bank_bytes < 1 || p.psum_bytes % p.psum_bank_bytes != 0)
    return fmt::format("psum_bytes ({}) must be a multiple of psum_bank_bytes ({})", p.psum_bytes, p.psum_bank_bytes);
  if (p.hbm_addr_bits < 1 || p.hbm_addr_bits > 40)
    return fmt::format("hbm_addr_bits ({}) must be 1 to 40 (the width of ap.offset)", p.hbm_addr_bits);
  return "";
}

// The rules of the timing parameters, on a preset with the values set; the first one broken, or "".
std::string timing_rule_broken(const Preset& p) {
  for (const auto& [v, name] : {std::pair{p.clock_mhz, "clock_mhz"}, {p.profile_clock_mhz, "profile_clock_mhz"},
                                {p.hbm_bytes_per_us, "hbm_bytes_per_us"}, {p.dma_queue_inflight, "dma_queue_inflight"},
                                {p.dma_engine_inflight, "dma_engine_inflight"}, {p.sbuf_usable_bytes, "sbuf_usable_bytes"},
                                {p.hbm_capacity_bytes, "hbm_capacity_bytes"}})
    if (v < 1) return fmt::format("{} must be at least 1", name);
  if (p.dma_queue_issue_ns > p.dma_fixed_cost_ns)
    return fmt::format("dma_queue_issue_ns ({}) must be at most dma_fixed_cost_ns ({}): it is the part of the fixed "
                       "cost that holds the queue", p.dma_queue_issue_ns, p.dma_fixed_cost_ns);
  if (p.sbuf_usable_bytes > p.sbuf_bytes)
    return fmt::format("sbuf_usable_bytes ({}) must be at most sbuf_bytes ({})", p.sbuf_usable_bytes, p.sbuf_bytes);
  if (p.hbm_addr_bits < 64 && p.hbm_capacity_bytes > (uint64_t{1} << p.hbm_addr_bits))
    return fmt::format("hbm_capacity_bytes ({}) must be at most 2^hbm_addr_bits", p.hbm_capacity_bytes);
  return "";
}

std::string text_of(const std::vector<std::pair<std::string, uint64_t>>& values) {
  std::vector<std::string> parts;
  for (const auto& [name, v] : values) parts.push_back(fmt::format("{}={}", name, v));
  return fmt::format("{}", fmt::join(parts, ","));
}

// One "NAME=VALUE": the parameter and the value, checked.
std::pair<std::string, uint64_t> parse_item(const std::string& item) {
  const auto eq = item.find('=');
  const std::string name = canonical(item.substr(0, eq));
  const PresetParam* p = param_named(name);
  if (eq == std::string::npos || !p || name == "id")
    throw InputError(fmt::format("--set {}: expected NAME=VALUE with NAME a preset parameter ({})", item,
                                 timing_parameter_names()));
  uint64_t v = 0;
  try {
    size_t used = 0;
    const std::string text = item.substr(eq + 1);
    v = std::stoull(text, &used);
    if (used != text.size() || text[0] == '-') throw std::invalid_argument("not whole");
  } catch (const std::exception&) {
    throw InputError(fmt::format("--set {}: the value must be a whole number of 0 or more", item));
  }
  return {name, v};
}

// The table's preset with the values set, checked: an RTL parameter is refused with the rule its
// value breaks, or for the model it would need.
Preset derive(const Preset& base, const std::vector<std::pair<std::string, uint64_t>>& values) {
  Preset p = base;
  std::vector<std::string> rtl;
  for (const auto& [name, v] : values) {
    const PresetParam* prm = param_named(name);
    p.*(prm->field) = v;
    if (prm->rtl && base.*(prm->field) != v) rtl.push_back(fmt::format("{}={}", name, v));
  }
  const std::string where = fmt::format("preset {} with {}", base.name, text_of(values));
  if (std::string r = rtl_rule_broken(p); !r.empty()) throw InputError(fmt::format("{}: {}", where, r));
  if (!rtl.empty())
    throw InputError(fmt::format(
        "{}: {} {} the RTL is built with (rtl/ncore_cfg_pkg.sv): such a preset needs a Verilated model of its "
        "own, and this simulator builds the models of the presets of ncore_presets.json only; a what-if run may "
        "change {}", where, fmt::join(rtl, ", "), rtl.size() == 1 ? "is a parameter" : "are parameters",
        timing_parameter_names()));
  if (std::string r = timing_rule_broken(p); !r.empty()) throw InputError(fmt::format("{}: {}", where, r));
  return p;
}

void read_env(State& s) {
  if (s.env_read) return;
  s.env_read = true;
  const char* env = std::getenv("NCORE_SET");
  if (!env) return;
  std::vector<std::pair<std::string, uint64_t>> from_env;
  std::string text = env;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    if (!item.empty()) from_env.push_back(parse_item(item));
    start = end + 1;
  }
  s.values.insert(s.values.begin(), from_env.begin(), from_env.end());
}

}  // namespace

const Preset* find_preset(std::string_view name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  read_env(s);
  s.fixed = true;
  const Preset* base = find_builtin_preset(name);
  if (!base || s.values.empty()) return base;
  for (const Preset& p : s.presets)
    if (name == p.name) return &p;
  s.presets.push_back(derive(*base, s.values));
  return &s.presets.back();
}

void set_preset_values(const std::vector<std::string>& items) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  read_env(s);
  if (s.fixed && !items.empty())
    throw InputError("--set: the preset values are fixed by the first run of a process (SystemC elaborates once "
                     "per process): set them before it");
  for (const std::string& item : items) s.values.push_back(parse_item(item));
}

std::string preset_values_text() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  read_env(s);
  return text_of(s.values);
}

std::string timing_parameter_names() {
  std::vector<std::string> names;
  for (const auto& p : kPresetParams)
    if (!p.rtl) names.emplace_back(p.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace ncore
