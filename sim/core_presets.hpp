// Constructors of the per-preset SystemC top levels built into this binary.
#pragma once

#include "core_sim.hpp"

namespace ncore::sim {
Core* make_core_trn2(const Preset& p);
Core* make_core_trn1(const Preset& p);
}  // namespace ncore::sim
