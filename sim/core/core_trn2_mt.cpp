// The trn2 preset's SystemC top level, two-thread model (see core_sim_impl.hpp and
// sim/CMakeLists.txt).
#include "Vncore_top_trn2_mt.h"
#include "Vncore_top_trn2_mt___024root.h"
#include "core/core_sim_impl.hpp"
#include "core/core_presets.hpp"

namespace ncore::sim {
namespace {
struct Trn2Mt {
  using Model = Vncore_top_trn2_mt;
  static constexpr int kEngines = 16;
  static constexpr int kQueues = 16;
  static constexpr unsigned kThreads = 2;
};
}  // namespace

Core* make_core_trn2_mt(const Preset& p) { return make_sc_core<Trn2Mt>(p, "ncore_trn2", "ncore_trn2_top"); }
}  // namespace ncore::sim
