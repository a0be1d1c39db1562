// The trn1 preset's SystemC top level (see core_sim_impl.hpp).
#include "Vncore_top_trn1.h"
#include "Vncore_top_trn1___024root.h"
#include "core_sim_impl.hpp"
#include "core_presets.hpp"

namespace ncore::sim {
namespace {
struct Trn1 {
  using Model = Vncore_top_trn1;
  static constexpr int kEngines = 16;
  static constexpr int kQueues = 16;
};
}  // namespace

Core* make_core_trn1(const Preset& p) {
  if (p.dma_engines != Trn1::kEngines || p.dma_queues != Trn1::kQueues)
    throw SimError("preset trn1 does not match the ports of its Verilated model");
  Verilated::traceEverOn(true);  // waveforms can be opened for any run
  auto* rtl = new Vncore_top_trn1("ncore_trn1");
  return new ScCore<Trn1>("ncore_trn1_top", p, rtl);
}
}  // namespace ncore::sim
