// nki.isa (nisa): the instructions a kernel issues. Each call checks its operands against
// the hardware's rules (NKI's error wording, plus the kernel location), lowers them to
// access patterns and hands the instruction to the scheduler.
//
// Argument order follows NKI 2.x (destination first). The forms without a destination
// allocate their result tile in SBUF at the call site, as NKI 0.x did.
#pragma once

#include <type_traits>

#include "nki/loc.hpp"
#include "nki/tensor.hpp"

namespace nki {

// A tensor_scalar operand: an fp32 immediate or a (P, 1) tile (one value per partition).
class Operand {
 public:
  Operand() = default;
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Operand(T v) : kind_(imm), value_(static_cast<float>(v)) {}
  Operand(const Tensor& t) : kind_(tile), tensor_(t) {}

  bool none() const { return kind_ == absent; }
  bool is_imm() const { return kind_ == imm; }
  bool is_tile() const { return kind_ == tile; }
  float value() const { return value_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  enum Kind { absent, imm, tile } kind_ = absent;
  float value_ = 0;
  Tensor tensor_;
};

namespace nisa {

// dst <- src between HBM and SBUF (either way) or within one of them; casts through fp32.
void dma_copy(const Tensor& dst, const Tensor& src, Loc loc = Loc::here());

// data1 op data2, elementwise.
Tensor tensor_tensor(const Tensor& data1, const Tensor& data2, AluOp op, Loc loc = Loc::here());
Tensor tensor_tensor(const Tensor& data1, const Tensor& data2, AluOp op, Dtype dtype, Loc loc = Loc::here());
void tensor_tensor(const Tensor& dst, const Tensor& data1, const Tensor& data2, AluOp op, Loc loc = Loc::here());

// (data op0 operand0) op1 operand1; reverse0/1 swap the operands of op0/op1.
Tensor tensor_scalar(const Tensor& data, AluOp op0, const Operand& operand0, bool reverse0 = false,
                     AluOp op1 = AluOp::bypass, const Operand& operand1 = {}, bool reverse1 = false,
                     Loc loc = Loc::here());
void tensor_scalar(const Tensor& dst, const Tensor& data, AluOp op0, const Operand& operand0, bool reverse0 = false,
                   AluOp op1 = AluOp::bypass, const Operand& operand1 = {}, bool reverse1 = false,
                   Loc loc = Loc::here());

// A copy on the vector engine, with a dtype cast when the dtypes differ.
Tensor tensor_copy(const Tensor& src, Loc loc = Loc::here());
Tensor tensor_copy(const Tensor& src, Dtype dtype, Loc loc = Loc::here());
void tensor_copy(const Tensor& dst, const Tensor& src, Loc loc = Loc::here());

// Fill with a constant.
void memset(const Tensor& dst, float value, Loc loc = Loc::here());

}  // namespace nisa
}  // namespace nki
