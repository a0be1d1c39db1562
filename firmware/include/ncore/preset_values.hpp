// What-if hardware: the presets as this process runs them, the table's (presets_gen.hpp) with
// parameters changed (`ncore-sim --set clock_mhz=2000`, NCORE_SET="clock_mhz=2000,dma_fixed_cost_ns=650").
//
// The timing parameters (the ones the RTL is not built with: the clock, the HBM's bandwidth,
// latency and size, the DMA fixed cost and how many transfers are in flight, the kernel start-up,
// the SBUF the allocator may use) change the run of the same Verilated model. A parameter the RTL
// is built with (the array and memory sizes, the DMA engines and queues, the engines' costs in
// cycles) is refused: the rule a value breaks first (num_partitions a multiple of dma_engines, ...),
// else that such a preset needs a Verilated model of its own, which this simulator does not build.
// The values hold for the whole process (SystemC elaborates once per process): they are set before
// the first lookup of a preset (find_preset), and NCORE_SET is read then.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ncore/presets_gen.hpp"

namespace ncore {

// Sets parameters of the presets this process runs ("NAME=VALUE" each, added to NCORE_SET's).
// Throws InputError for an unknown name, a value that is not a whole number, a parameter the RTL
// is built with, or once a preset has been looked up.
void set_preset_values(const std::vector<std::string>& items);

// The values set, as "NAME=VALUE,..." in the order given ("" when none).
std::string preset_values_text();

// The parameters a what-if run may change, comma-separated.
std::string timing_parameter_names();

}  // namespace ncore
