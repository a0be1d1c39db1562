// The trn2 preset's SystemC top level, single-thread model: its Verilated model's port binding.
#include "Vncore_top_trn2.h"
#include "core/core_presets.hpp"
#include "core/verilated_rtl.hpp"

namespace ncore::sim {
namespace {
struct Trn2 {
  using Model = Vncore_top_trn2;
  static constexpr std::string_view kPreset = "trn2";
  static constexpr unsigned kThreads = 1;
};
}  // namespace

Core* make_core_trn2(const Preset& p) { return make_core<Trn2>(p, "ncore_trn2", "ncore_trn2_top"); }
}  // namespace ncore::sim
