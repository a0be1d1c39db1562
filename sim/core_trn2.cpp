// The trn2 preset's SystemC top level (see core_sim_impl.hpp).
#include "Vncore_top_trn2.h"
#include "Vncore_top_trn2___024root.h"
#include "core_sim_impl.hpp"
#include "core_presets.hpp"

namespace ncore::sim {
namespace {
struct Trn2 {
  using Model = Vncore_top_trn2;
  static constexpr int kEngines = 16;
  static constexpr int kQueues = 16;
};
}  // namespace

Core* make_core_trn2(const Preset& p) {
  if (p.dma_engines != Trn2::kEngines || p.dma_queues != Trn2::kQueues)
    throw SimError("preset trn2 does not match the ports of its Verilated model");
  Verilated::traceEverOn(true);  // waveforms can be opened for any run
  auto* rtl = new Vncore_top_trn2("ncore_trn2");
  return new ScCore<Trn2>("ncore_trn2_top", p, rtl);
}
}  // namespace ncore::sim
