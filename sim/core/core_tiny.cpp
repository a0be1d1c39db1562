// The tiny preset's SystemC top level: its Verilated model's port binding.
#include "Vncore_top_tiny.h"
#include "core/core_presets.hpp"
#include "core/verilated_rtl.hpp"

namespace ncore::sim {
namespace {
struct Tiny {
  using Model = Vncore_top_tiny;
  static constexpr std::string_view kPreset = "tiny";
  static constexpr unsigned kThreads = 1;
};
}  // namespace

Core* make_core_tiny(const Preset& p) { return make_core<Tiny>(p, "ncore_tiny", "ncore_tiny_top"); }
}  // namespace ncore::sim
