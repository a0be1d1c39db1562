// The scalar-engine and reduction API (nisa::activation, activation_reduce, tensor_reduce) and the
// fused conv2d + maxpool kernel: how they lower, every error they give, the kernel's instruction
// counts, random interleavings of its Program, and its output on the golden model against the
// plain C++ reference in every dtype.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

#include "exec_check.hpp"
#include "kernel_run.hpp"
#include "ncore/ap.hpp"
#include "kernels/conv.hpp"
#include "ncore/error.hpp"
#include "ncore/validate.hpp"
#include "nki/nki.hpp"
#include "kernels/kernel.hpp"
#include "ncore/numerics.hpp"

namespace {

namespace nl = nki::nl;
namespace nisa = nki::nisa;
namespace isa = ncore::isa;
using nki::Tensor;
using Op = isa::Opcode;

const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

std::string error_of(const std::function<void(nki::Tracer&)>& body) { return fwtest::trace_error(body); }

// The instructions of one stream of a traced body, sem_waits left out.
std::vector<isa::Insn> insns(const std::function<void(nki::Tracer&)>& body, ncore::StreamKind k) {
  const ncore::Program p = nki::trace("test", trn2(), body);
  std::vector<isa::Insn> v;
  for (const auto& i : p.streams[static_cast<unsigned>(k)].insns)
    if (i.insn.opcode != Op::sem_wait) v.push_back(i.insn);
  return v;
}

kernels::Args conv_args(int64_t b, int64_t ci, int64_t co, int64_t h, int64_t w, int64_t pool, isa::Dtype dt) {
  kernels::Args a;
  a.kernel = "conv";
  a.set("batch", b);
  a.set("in_channels", ci);
  a.set("out_channels", co);
  a.set("height", h);
  a.set("width", w);
  a.set("pool_size", pool);
  a.dtype = dt;
  return a;
}

uint64_t count(const ncore::Program& p, Op op) { return fwtest::count_opcode(p, op); }

}  // namespace

TEST_CASE("tensor_reduce lowers the trailing axes to the innermost dimensions", "[firmware][reduce]") {
  // [128, 4, 6] contiguous lowers to one dimension of 24: reducing axis 2 splits it into (6, 4)
  auto v = insns(
      [](nki::Tracer&) {
        Tensor x = nl::ndarray({128, 4, 6}, nl::float32, nl::sbuf, "x");
        nisa::memset(x, 1.0f);
        Tensor r = nisa::tensor_reduce(nl::maximum, x, 2);
        CHECK(r.shape() == nki::Shape{128, 4});
        Tensor s = nisa::tensor_reduce(nl::add, x, {1, 2}, nl::bfloat16, true);
        CHECK(s.shape() == nki::Shape{128, 1, 1});
        CHECK(s.dtype() == nl::bfloat16);
        Tensor u = nisa::tensor_reduce(nl::minimum, x, -1);
        CHECK(u.shape() == nki::Shape{128, 4});
      },
      ncore::StreamKind::dve);
  REQUIRE(v.size() == 4);
  CHECK(v[1].opcode == Op::tensor_reduce);
  CHECK(v[1].op0 == isa::AluOp::max);
  CHECK(v[1].red_axes == 1);
  CHECK(v[1].src0.size[0] == 6);
  CHECK(v[1].src0.size[1] == 4);
  CHECK(v[1].src0.stride[1] == 6);
  CHECK(ncore::ap_free_elems(v[1].dst) == 4);
  CHECK(v[2].red_axes == 1);  // both axes: the one merged dimension of 24
  CHECK(v[2].src0.size[0] == 24);
  CHECK(ncore::ap_free_elems(v[2].dst) == 1);
  CHECK(v[2].dst.dtype == isa::Dtype::bf16);
  CHECK(v[3].op0 == isa::AluOp::min);
  REQUIRE_NOTHROW(ncore::validate_insn(v[1], trn2(), 0));
  // a strided view keeps its dimensions apart: reduce 2 of [128, 3, 5 (of 8)]
  v = insns(
      [](nki::Tracer&) {
        Tensor x = nl::ndarray({128, 3, 8}, nl::float32, nl::sbuf, "x");
        nisa::memset(x, 1.0f);
        nisa::tensor_reduce(nl::add, x(nl::all, nl::all, nl::ds(0, 5)), {1, 2});
      },
      ncore::StreamKind::dve);
  REQUIRE(v.size() == 2);
  CHECK(v[1].red_axes == 2);
  CHECK(v[1].src0.size[0] == 5);
  CHECK(v[1].src0.size[1] == 3);
}

TEST_CASE("tensor_reduce errors", "[firmware][reduce][constraints]") {
  auto body = [](nki::AluOp op, nisa::Axes axes, nki::Shape dst) {
    return [=](nki::Tracer&) {
      Tensor x = nl::ndarray({128, 4, 6}, nl::float32, nl::sbuf, "x");
      if (dst.empty()) {
        nisa::tensor_reduce(op, x, axes);
      } else {
        Tensor d = nl::ndarray(dst, nl::float32, nl::sbuf, "d");
        nisa::tensor_reduce(d, op, x, axes);
      }
    };
  };
  // an axis that is not trailing is reduced through a permuted view (as the engines' access
  // patterns allow), so only its destination's shape is held to it
  CHECK(error_of(body(nl::add, 1, {})) == "<no error>");
  CHECK(error_of(body(nl::add, 1, {128, 6})) == "<no error>");
  CHECK_THAT(error_of(body(nl::add, 1, {128, 4})), Catch::Contains("has 4 elements per partition"));
  CHECK_THAT(error_of(body(nl::add, {0, 1, 2}, {})), Catch::Contains("dimension 0 is the partition dimension"));
  CHECK_THAT(error_of(body(nl::subtract, 2, {})),
             Catch::Contains("op 'subtract' of 'tensor_reduce' is not supported: use nl::add, nl::multiply"));
  CHECK_THAT(error_of(body(nl::add, 2, {128, 6})),
             Catch::Contains("dst d[128, 6] of 'tensor_reduce' has 6 elements per partition, but reducing axis (2) of "
                             "data x[128, 4, 6] leaves 4"));
  CHECK_THAT(error_of(body(nl::add, 2, {64, 4})), Catch::Contains("must be on the partitions of data"));
}

TEST_CASE("activation lowers to the scalar engine: scale, bias, add-reduce", "[firmware][act]") {
  const auto v = insns(
      [](nki::Tracer&) {
        Tensor x = nl::ndarray({128, 64}, nl::float32, nl::psum, "x");
        Tensor b = nl::ndarray({128, 1}, nl::bfloat16, nl::sbuf, "b");
        Tensor s = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "s");
        Tensor r = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "r");
        nisa::memset(x, 1.0f);
        nisa::memset(b, 1.0f);
        nisa::memset(s, 1.0f);
        Tensor y = nisa::activation(nl::relu, x, b, 2.0f, nl::float16);  // PSUM in, SBUF fp16 out
        CHECK(y.dtype() == nl::float16);
        Tensor z = nl::ndarray({128, 64}, nl::float32, nl::sbuf, "z");
        nisa::activation(z, nl::identity, y);
        nisa::activation_reduce(z, nl::identity, y, nl::add, r, -1.5f, s);
      },
      ncore::StreamKind::act);
  REQUIRE(v.size() == 3);
  CHECK(v[0].opcode == Op::activation);
  CHECK(v[0].engine == isa::Engine::act);
  CHECK(v[0].func == isa::ActFunc::relu);
  CHECK(v[0].src0.mem == isa::Buffer::psum);
  CHECK(v[0].dst.dtype == isa::Dtype::fp16);
  CHECK(v[0].s1_vec);
  CHECK(v[0].s1.dtype == isa::Dtype::bf16);
  CHECK_FALSE(v[0].s0_vec);
  CHECK(v[0].imm0 == 0x40000000u);  // scale 2.0
  CHECK(v[0].dst2.num_part == 0);
  CHECK(v[1].imm0 == 0x3F800000u);  // scale 1.0 by default
  CHECK(v[1].imm1 == 0x80000000u);  // no bias: -0.0, the additive identity
  CHECK_FALSE(v[1].s1_vec);
  CHECK(v[2].s0_vec);
  CHECK(v[2].imm1 == 0xBFC00000u);  // bias -1.5
  CHECK(v[2].dst2.num_part == 128);
  CHECK(ncore::ap_free_elems(v[2].dst2) == 1);
  for (const auto& i : v) REQUIRE_NOTHROW(ncore::validate_insn(i, trn2(), 0));
}

TEST_CASE("activation errors", "[firmware][act][constraints]") {
  CHECK_THAT(error_of([](nki::Tracer&) {
               Tensor x = nl::ndarray({128, 64}, nl::float32, nl::sbuf, "x");
               Tensor s = nl::ndarray({128, 1}, nl::bfloat16, nl::sbuf, "s");
               nisa::activation(nl::relu, x, {}, s);
             }),
             Catch::Contains("scale of 'activation' must be a float32 scalar or a float32 tile of shape (P, 1)"));
  CHECK_THAT(error_of([](nki::Tracer&) {
               Tensor x = nl::ndarray({128, 64}, nl::float32, nl::sbuf, "x");
               Tensor b = nl::ndarray({128, 2}, nl::float32, nl::sbuf, "b");
               nisa::activation(nl::relu, x, b);
             }),
             Catch::Contains("bias of 'activation' must be a scalar or a tile of shape (P, 1) with P = 128"));
  CHECK_THAT(error_of([](nki::Tracer&) {
               Tensor x = nl::ndarray({128, 64}, nl::float32, nl::sbuf, "x");
               Tensor r = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "r");
               nisa::activation_reduce(x, nl::relu, x, nl::maximum, r);
             }),
             Catch::Contains("reduce_op of 'activation_reduce' must be nl::add"));
  CHECK_THAT(error_of([](nki::Tracer&) {
               Tensor x = nl::ndarray({128, 64}, nl::float32, nl::sbuf, "x");
               Tensor r = nl::ndarray({128, 2}, nl::float32, nl::sbuf, "r");
               nisa::activation_reduce(x, nl::relu, x, nl::add, r);
             }),
             Catch::Contains("reduce_res r[128, 2] of 'activation_reduce' must be a tile of shape (P, 1)"));
  CHECK_THAT(error_of([](nki::Tracer& t) {
               Tensor x = t.input("x", {128, 64}, nl::float32);
               nisa::activation(nl::relu, x);
             }),
             Catch::Contains("Expected operand 'data' of 'activation' to be in address space 'sbuf' or 'psum'"));
}

TEST_CASE("fused_conv2d_maxpool: instruction counts, valid Programs", "[firmware][conv]") {
  struct Case {
    int64_t b, ci, co, h, w, pool;
    isa::Dtype dt;
    uint64_t groups_per_image;  // PSUM row groups per image and output-channel tile
  };
  // 32x16: one group of 30 rows (30 x 14 = 420 <= 512); 224x224: 111 groups of 2 rows of 222
  for (const Case& c : {Case{4, 128, 128, 32, 16, 1, isa::Dtype::fp32, 1}, Case{4, 256, 128, 32, 16, 2, isa::Dtype::bf16, 1},
                        Case{1, 256, 256, 224, 224, 1, isa::Dtype::fp16, 111},
                        Case{1, 128, 256, 224, 224, 2, isa::Dtype::fp32, 111}}) {
    INFO(c.b << " " << c.ci << " " << c.co << " " << c.h << "x" << c.w << " pool " << c.pool);
    const ncore::Program p = kernels::build(conv_args(c.b, c.ci, c.co, c.h, c.w, c.pool, c.dt), trn2());
    const uint64_t ct = c.ci / 128, cot = c.co / 128, groups = c.b * cot * c.groups_per_image;
    CHECK(count(p, Op::multiply_moving) == groups * ct * 9 + cot * ct * 9);  // the conv, the weight transposes
    CHECK(count(p, Op::load_stationary) == count(p, Op::multiply_moving));
    CHECK(count(p, Op::activation) == groups);  // bias on the way out of PSUM
    CHECK(count(p, Op::tensor_reduce) == (c.pool > 1 ? groups : 0));
    CHECK(count(p, Op::tensor_tensor) == (c.pool > 1 ? groups : 0));
    // nothing but the inputs is read from HBM, nothing but the output written to it
    const ncore::HbmTensor* out = p.find_tensor("out");
    REQUIRE(out);
    for (const auto& s : p.streams)
      for (const auto& i : s.insns)
        if (i.insn.opcode == Op::dma_copy && i.insn.dst.mem == isa::Buffer::hbm) {
          CHECK(i.insn.dst.offset >= out->offset);
          CHECK(i.insn.dst.offset < out->offset + out->bytes);
        }
    REQUIRE_NOTHROW(ncore::validate_program(p, trn2()));
  }
}

TEST_CASE("fused_conv2d_maxpool runs to completion with every conflict ordered", "[firmware][conv]") {
  nki::TraceStats st;
  nki::TraceOptions o;
  o.record_order = true;
  o.stats = &st;
  const ncore::Program p = nki::trace(
      "conv", trn2(),
      [](nki::Tracer& t) {
        Tensor x = t.input("X", {2, 256, 20, 12}, nl::float32);
        Tensor w = t.input("W", {128, 256, 3, 3}, nl::float32);
        Tensor b = t.input("bias", {128}, nl::float32);
        t.output(kernels::fused_conv2d_maxpool(x, w, b, 2));
      },
      o);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const fwtest::Execution e = fwtest::execute(p, trn2(), seed);
    INFO("seed " << seed << ": " << e.error);
    REQUIRE(e.completed);
    const auto bad = fwtest::check_hazards(p, e, st.order);
    CHECK(bad.empty());
    if (!bad.empty()) FAIL_CHECK(bad.front());
  }
}

TEST_CASE("fused_conv2d_maxpool on the golden model against the C++ reference, every dtype", "[firmware][conv][golden]") {
  struct Case {
    int64_t b, ci, co, h, w, pool;
    isa::Dtype dt;
    bool bias;
  };
  for (const Case& c : {Case{2, 128, 128, 12, 10, 1, isa::Dtype::fp32, true}, Case{1, 256, 128, 18, 10, 2, isa::Dtype::fp32, false},
                        Case{2, 128, 256, 10, 14, 2, isa::Dtype::bf16, true}, Case{1, 128, 128, 38, 11, 3, isa::Dtype::fp16, true},
                        // pool sizes that divide neither output dimension: floor, the rest dropped
                        Case{1, 128, 128, 11, 10, 3, isa::Dtype::fp32, true}, Case{2, 128, 128, 9, 8, 2, isa::Dtype::bf16, true}}) {
    INFO(c.b << " " << c.ci << " " << c.co << " " << c.h << "x" << c.w << " pool " << c.pool << " "
              << isa::to_string(c.dt));
    kernels::Args a = conv_args(c.b, c.ci, c.co, c.h, c.w, c.pool, c.dt);
    a.set("bias", c.bias);
    testing::RunSettings st;
    st.backend = ncore::run::Backend::golden;
    st.seed = 5;
    st.lo = -1.0f;
    st.hi = 1.0f;
    const ncore::run::KernelRun r = testing::run_kernel(a, st);
    const std::vector<uint8_t>& want = testing::expected(r);
    const std::vector<uint8_t>& got = testing::output(r);
    REQUIRE(want.size() == got.size());
    // fp32 sums of Cin * 9 products of magnitude < 1: an absolute bound from the accumulation, plus
    // one rounding to the dtype
    const unsigned esz = isa::dtype_bytes(c.dt);
    const double ulp = c.dt == isa::Dtype::fp32 ? 0x1p-24 : c.dt == isa::Dtype::fp16 ? 0x1p-11 : 0x1p-8;
    const double acc_bound = double(c.ci * 9 + 2) * 0x1p-24 * double(c.ci * 9);
    uint64_t bad = 0, nonzero = 0;
    for (uint64_t i = 0; i < want.size() / esz; ++i) {
      uint32_t gb = 0, wb = 0;
      std::memcpy(&gb, &got[i * esz], esz);
      std::memcpy(&wb, &want[i * esz], esz);
      const double gv = ncore::num::to_float(gb, c.dt), wv = ncore::num::to_float(wb, c.dt);
      const double err = std::fabs(gv - wv), bound = acc_bound + 2 * ulp * std::fabs(wv) + 1e-30;
      bad += !(err <= bound);
      nonzero += gv != 0;
    }
    CHECK(bad == 0);
    CHECK(nonzero > want.size() / esz / 2);  // a real output was compared, not an empty one
  }
}

TEST_CASE("fused_conv2d_maxpool errors", "[firmware][conv][constraints]") {
  auto err = [](kernels::Args a) {
    try {
      kernels::build(a, trn2());
    } catch (const ncore::KernelError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  CHECK_THAT(err(conv_args(1, 96, 128, 32, 16, 1, isa::Dtype::fp32)),
             Catch::Contains("Input Channels (96) must be a multiple of 128"));
  CHECK_THAT(err(conv_args(1, 128, 200, 32, 16, 1, isa::Dtype::fp32)),
             Catch::Contains("Output Channels (200) must be a multiple of 128"));
  CHECK_THAT(err(conv_args(1, 128, 128, 33, 5, 4, isa::Dtype::fp32)),
             Catch::Contains("the output size 31 x 3 ((Input Height - Filter Height + 1) x (Input Width - Filter Width "
                             "+ 1)) is smaller than the 4 x 4 pool window"));
  CHECK(err(conv_args(1, 128, 128, 33, 16, 2, isa::Dtype::fp32)) == "<no error>");  // 31 x 14: floor, 15 x 7
  kernels::Args a = conv_args(1, 2048, 1024, 32, 16, 1, isa::Dtype::fp32);
  CHECK_THAT(err(a), Catch::Contains("the weights W [1024, 2048, 3, 3] need") &&
                         Catch::Contains("bytes per partition in the SBUF"));
  CHECK_THAT(err(conv_args(1, 128, 128, 32, 600, 1, isa::Dtype::fp32)),
             Catch::Contains("output rows of 598 elements do not fit one PSUM bank"));
  // the kernel traced on a [1, 128, 16, 16] float32 image with these weights
  const auto weights_err = [](const nki::Shape& w_shape, nki::Dtype w_dtype) {
    return error_of([&](nki::Tracer& t) {
      Tensor x = t.input("X", {1, 128, 16, 16}, nl::float32);
      Tensor w = t.input("W", w_shape, w_dtype);
      Tensor b = t.input("bias", {128}, nl::float32);
      t.output(kernels::fused_conv2d_maxpool(x, w, b, 1));
    });
  };
  CHECK_THAT(weights_err({128, 128, 3, 2}, nl::float32),
             Catch::Contains("the filter must be square (Filter Height == Filter Width), got 3 x 2"));
  CHECK_THAT(weights_err({128, 128, 3, 3}, nl::float16), Catch::Contains("X, W and bias must have one dtype"));
}
