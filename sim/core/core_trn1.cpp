// The trn1 preset's SystemC top level: its Verilated model's port binding.
#include "Vncore_top_trn1.h"
#include "core/core_presets.hpp"
#include "core/verilated_rtl.hpp"

namespace ncore::sim {
namespace {
struct Trn1 {
  using Model = Vncore_top_trn1;
  static constexpr std::string_view kPreset = "trn1";
  static constexpr unsigned kThreads = 1;
};
}  // namespace

Core* make_core_trn1(const Preset& p) { return make_core<Trn1>(p, "ncore_trn1", "ncore_trn1_top"); }
}  // namespace ncore::sim
