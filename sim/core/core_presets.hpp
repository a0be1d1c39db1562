// Constructors of the SystemC top levels built into this binary, one per Verilated model.
#pragma once

#include "core/core_sim.hpp"

namespace ncore::sim {
Core* make_core_trn2(const Preset& p);
Core* make_core_trn2_mt(const Preset& p);  // two threads
Core* make_core_trn1(const Preset& p);
Core* make_core_tiny(const Preset& p);  // the small configuration (16 partitions): random regression
}  // namespace ncore::sim
