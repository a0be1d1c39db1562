// The simulation-only PE array's C++ side (fast_pe.cpp; rtl/sim/ncore_pe_array.sv calls
// its DPI-C imports): what a run reports about it, and the tests' switch between its kernels.
#pragma once

namespace ncore::sim::fastpe {

// The kernel that computes the column sums: "avx2-fma" (8 columns per instruction, where the CPU
// has AVX2 and FMA) or "scalar-fmaf".
const char* kernel_name();

// Forces the scalar kernel (true) or lets the CPU decide (false); NCORE_FASTPE_SCALAR=1 in the
// environment forces it from the start.
void force_scalar(bool on);

}  // namespace ncore::sim::fastpe
