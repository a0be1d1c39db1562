// Kinds of the ISA's dtypes and ALU ops that the engines, the validator and the golden model
// treat alike: the integer dtypes, and the bitvec ALU ops (on the elements' bits, not fp32).
#pragma once

#include "ncore/isa_gen.hpp"

namespace ncore::isa {

inline constexpr bool is_integer(Dtype d) {
  return d == Dtype::int8 || d == Dtype::uint8 || d == Dtype::int16 || d == Dtype::uint16 || d == Dtype::int32 ||
         d == Dtype::uint32;
}

inline constexpr bool is_signed_integer(Dtype d) { return d == Dtype::int8 || d == Dtype::int16 || d == Dtype::int32; }

// The 32-bit floats, which the tensor engine pairs only with each other (fp32, tf32).
inline constexpr bool is_fp32_class(Dtype d) { return d == Dtype::fp32 || d == Dtype::tf32; }

inline constexpr bool is_bitvec(AluOp op) {
  return op == AluOp::bitwise_and || op == AluOp::bitwise_or || op == AluOp::bitwise_xor || op == AluOp::invert ||
         op == AluOp::left_shift || op == AluOp::right_shift;
}

}  // namespace ncore::isa
