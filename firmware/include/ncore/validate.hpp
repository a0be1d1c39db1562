// Checks that one instruction is well formed and stays inside the memories of a preset.
// The scheduler calls it when a kernel is traced, the image loader when a Program is read,
// and the simulator and golden model before they run anything, so a bad instruction is a
// clear error rather than an out-of-range access in the RTL or a silent wrong answer.
#pragma once

#include <cstdint>
#include <string>

#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"

namespace ncore {

// Throws SimError naming the instruction, the operand and the limit it breaks.
void validate_insn(const isa::Insn& insn, const Preset& preset, uint64_t hbm_bytes);

// A multiply_moving against the stationary operand in the array (k rows, m columns, dtype):
// the moving operand has k partitions, the PSUM result m partitions and as many elements as
// the moving operand, and fp32 pairs only with fp32. Throws SimError.
void validate_pe_pair(uint32_t k, uint32_t m, isa::Dtype stationary_dtype, const isa::Insn& mm);

struct Program;
// Every instruction, and every multiply_moving against the load_stationary before it on the
// tensor engine's stream.
void validate_program(const Program& prog, const Preset& preset);

}  // namespace ncore
