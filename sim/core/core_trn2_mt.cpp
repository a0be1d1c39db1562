// The trn2 preset's SystemC top level, two-thread model (sim/CMakeLists.txt says why): its
// Verilated model's port binding.
#include "Vncore_top_trn2_mt.h"
#include "core/core_presets.hpp"
#include "core/verilated_rtl.hpp"

namespace ncore::sim {
namespace {
struct Trn2Mt {
  using Model = Vncore_top_trn2_mt;
  static constexpr std::string_view kPreset = "trn2";
  static constexpr unsigned kThreads = 2;
};
}  // namespace

Core* make_core_trn2_mt(const Preset& p) { return make_core<Trn2Mt>(p, "ncore_trn2", "ncore_trn2_top"); }
}  // namespace ncore::sim
