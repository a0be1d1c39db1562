// The tensor-engine API's lowering: nc_matmul and nc_transpose (instructions, operands, the
// accumulate flag under inference, stationary reuse, the hidden identity). PSUM allocation and
// the constraint errors are in test_pe_constraints.cpp.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "ncore/validate.hpp"
#include "golden_model.hpp"
#include "pe_test.hpp"

using namespace pe_test;

namespace {

std::string at(int line) { return at_line(__FILE__, line); }

// acc flags of the multiplies, in order.
std::vector<int> acc_flags(const ncore::Program& p) {
  std::vector<int> v;
  for (const auto& i : insns(p, kPe))
    if (i.opcode == isa::Opcode::multiply_moving) v.push_back(i.acc ? 1 : 0);
  return v;
}

constexpr Op LS = Op::load_stationary, MM = Op::multiply_moving;

}  // namespace

// --- lowering ---------------------------------------------------------------------------------

TEST_CASE("nc_matmul lowers to load_stationary + multiply_moving on the tensor engine", "[firmware][pe]") {
  ncore::Program p = run([&](nki::Tracer& t) {
    Tensor s = sbuf_input(t, "a", {128, 64}, nl::bfloat16, "s");
    Tensor m = sbuf_input(t, "b", {128, 512}, nl::float16, "m");
    Tensor d = nl::ndarray({64, 512}, nl::float32, nl::psum, "d");
    nisa::nc_matmul(d, s, m);
  });
  REQUIRE(opcodes(p, kPe) == std::vector<Op>{LS, MM});
  const auto pe = insns(p, kPe);
  const isa::Insn& ls = pe[0];
  const isa::Insn& mm = pe[1];
  CHECK(ls.engine == isa::Engine::pe);
  CHECK(ls.src0.mem == isa::Buffer::sbuf);
  CHECK(ls.src0.dtype == isa::Dtype::bf16);
  CHECK(ls.src0.num_part == 128);
  CHECK(ncore::ap_free_elems(ls.src0) == 64);
  CHECK(mm.src0.mem == isa::Buffer::sbuf);
  CHECK(mm.src0.dtype == isa::Dtype::fp16);
  CHECK(ncore::ap_free_elems(mm.src0) == 512);
  CHECK(mm.dst.mem == isa::Buffer::psum);
  CHECK(mm.dst.dtype == isa::Dtype::fp32);
  CHECK(mm.dst.num_part == 64);
  CHECK(mm.dst.offset == 0);
  CHECK_FALSE(mm.acc);
  // The load waits for the stationary's DMA, the multiply for the moving one's.
  CHECK(ls.wait_cond == isa::SemCond::ge);
  CHECK(ls.wait_sem >= ncore::kNumEngineStreams);
  CHECK(mm.wait_cond == isa::SemCond::ge);
  CHECK(mm.wait_sem >= ncore::kNumEngineStreams);
  CHECK(ls.wait_sem != mm.wait_sem);
  REQUIRE_NOTHROW(ncore::validate_program(p, trn2()));
  // The listing shows the operands and the accumulate flag.
  CHECK_THAT(ncore::format_insn(ls), Catch::StartsWith("load_stationary src0=sbuf[0:128]+0x") &&
                                         Catch::Contains(" bf16 <64>  wait S["));
  CHECK_THAT(ncore::format_insn(mm), Catch::StartsWith("multiply_moving dst=psum[0:64]+0x0 fp32 <512> src0=sbuf[0:128]+0x") &&
                                         Catch::Contains(" fp16 <512> acc=0  wait S["));
  CHECK_THAT(p.listing(), Catch::Contains("pe[1]  multiply_moving"));
}

TEST_CASE("accumulate: explicit, inferred, and the += form", "[firmware][pe]") {
  auto body = [](int mode) {
    return [mode](nki::Tracer&) {
      Tensor s = nl::ndarray({128, 128}, nl::float32, nl::sbuf, "s");
      Tensor m = nl::ndarray({128, 512}, nl::float32, nl::sbuf, "m");
      nisa::memset(s, 1.0f);
      nisa::memset(m, 1.0f);
      Tensor d = nl::ndarray({128, 512}, nl::float32, nl::psum, "d");
      if (mode == 0) {  // inferred: overwrite, then accumulate
        nisa::nc_matmul(d, s, m);
        nisa::nc_matmul(d, s, m);
        nisa::nc_matmul(d, s, m);
      } else if (mode == 1) {  // explicit
        nisa::nc_matmul(d, s, m, true);
        nisa::nc_matmul(d, s, m, false);
        nisa::nc_matmul(d, s, m, true);
      } else if (mode == 2) {  // a read closes the group; the next matmul overwrites
        nisa::nc_matmul(d, s, m);
        nisa::nc_matmul(d, s, m);
        Tensor r = nisa::tensor_copy(d, nl::bfloat16);
        nisa::nc_matmul(d, s, m);
        nisa::nc_matmul(d, s, m);
      } else if (mode == 3) {  // the handout's form
        d += nisa::nc_matmul(s, m);
        d += nisa::nc_matmul(s, m);
      } else if (mode == 4) {  // nl::zeros: the memset does not open a group
        Tensor z = nl::zeros({128, 512}, nl::float32, nl::psum, "z");
        z += nisa::nc_matmul(s, m);
        z += nisa::nc_matmul(s, m);
      } else if (mode == 5) {  // disjoint slices of one tile each start their own group
        nisa::nc_matmul(d(nl::all, nl::ds(0, 256)), s, m(nl::all, nl::ds(0, 256)));
        nisa::nc_matmul(d(nl::all, nl::ds(256, 256)), s, m(nl::all, nl::ds(0, 256)));
        nisa::nc_matmul(d(nl::all, nl::ds(0, 256)), s, m(nl::all, nl::ds(256, 256)));
        // a memset (not a read) leaves the group of the second slice open
        nisa::memset(d(nl::all, nl::ds(0, 256)), 0.0f);
        nisa::nc_matmul(d(nl::all, nl::ds(256, 256)), s, m(nl::all, nl::ds(0, 256)));
      }
    };
  };
  CHECK(acc_flags(run(body(0))) == std::vector<int>{0, 1, 1});
  CHECK(acc_flags(run(body(1))) == std::vector<int>{1, 0, 1});
  CHECK(acc_flags(run(body(2))) == std::vector<int>{0, 1, 0, 1});
  CHECK(acc_flags(run(body(3))) == std::vector<int>{0, 1});
  const ncore::Program z = run(body(4));
  CHECK(acc_flags(z) == std::vector<int>{0, 1});
  CHECK(fwtest::count_opcode(z, Op::memset) == 2);  // s and m: the zeros' is elided (its first matmul overwrites)
  CHECK(acc_flags(run(body(5))) == std::vector<int>{0, 0, 1, 1});
}

TEST_CASE("a multiply with acc reads its PSUM destination: it waits for the copy out's WAR", "[firmware][pe]") {
  // The third matmul overwrites after the copy read the tile: it must wait for the copy (WAR);
  // the second accumulates after the first on the same stream (no wait needed).
  ncore::Program p = run([&](nki::Tracer&) {
    Tensor s = nl::zeros({128, 128}, nl::bfloat16, nl::sbuf, "s");
    Tensor m = nl::zeros({128, 512}, nl::bfloat16, nl::sbuf, "m");
    Tensor d = nl::ndarray({128, 512}, nl::float32, nl::psum, "d");
    nisa::nc_matmul(d, s, m);
    nisa::nc_matmul(d, s, m);
    Tensor r = nl::copy(d, nl::bfloat16);
    nisa::nc_matmul(d, s, m);
  });
  const auto pe = insns(p, kPe);
  REQUIRE(opcodes(p, kPe) == std::vector<Op>{LS, MM, MM, MM});  // the stationary stays loaded
  const auto dve = insns(p, kDve);
  REQUIRE(dve.size() == 3);
  CHECK(dve[2].opcode == Op::tensor_copy);
  CHECK(dve[2].src0.mem == isa::Buffer::psum);
  CHECK(dve[2].dst.mem == isa::Buffer::sbuf);
  CHECK(dve[2].dst.dtype == isa::Dtype::bf16);
  CHECK(dve[2].wait_sem == kPe);
  CHECK(dve[2].wait_val == 3);  // after the second multiply (the load is instruction 1)
  CHECK(pe[3].wait_sem == kDve);
  CHECK(pe[3].wait_val == 3);
  CHECK_FALSE(pe[3].acc);
}

TEST_CASE("load_stationary is skipped while the array holds the same unchanged operand", "[firmware][pe]") {
  auto body = [](bool rewrite) {
    return [rewrite](nki::Tracer& t) {
      Tensor x = t.input("x", {128, 128}, nl::bfloat16);
      Tensor s = nl::ndarray({128, 128}, nl::bfloat16, nl::sbuf, "s");
      Tensor s2 = nl::ndarray({128, 128}, nl::bfloat16, nl::sbuf, "s2");
      Tensor m = nl::zeros({128, 512}, nl::bfloat16, nl::sbuf, "m");
      nisa::dma_copy(s, x);
      nisa::dma_copy(s2, x);
      for (int64_t n : nl::affine_range(3)) {
        Tensor d = nl::ndarray({128, 512}, nl::float32, nl::psum, "d");
        nisa::nc_matmul(d, s, m);
        if (rewrite && n == 1) nisa::dma_copy(s, x);  // changes what the array would hold
      }
      Tensor d2 = nl::ndarray({128, 512}, nl::float32, nl::psum, "d2");
      nisa::nc_matmul(d2, s2, m);  // another operand
      nisa::nc_matmul(d2, s, m);   // back to s: reloaded
    };
  };
  nki::TraceStats st;
  nki::TraceOptions o;
  o.stats = &st;
  CHECK(opcodes(run(body(false), o), kPe) == std::vector<Op>{LS, MM, MM, MM, LS, MM, LS, MM});
  CHECK(st.stationary_reuses == 2);
  CHECK(opcodes(run(body(true), o), kPe) == std::vector<Op>{LS, MM, MM, LS, MM, LS, MM, LS, MM});
  CHECK(st.stationary_reuses == 1);
  o.reuse_stationary = false;
  CHECK(opcodes(run(body(false), o), kPe) == std::vector<Op>{LS, MM, LS, MM, LS, MM, LS, MM, LS, MM});
  CHECK(st.stationary_reuses == 0);
}

TEST_CASE("nc_transpose: a matmul against an identity loaded once from a constant", "[firmware][pe]") {
  ncore::Program p = run([&](nki::Tracer& t) {
    Tensor xs = sbuf_input(t, "x", {128, 96}, nl::float32, "xs");
    Tensor y = t.input("y", {64, 128}, nl::float16);
    Tensor ys = nl::ndarray({128, 128}, nl::float16, nl::sbuf, "ys");
    nisa::dma_copy(ys(nl::ds(64, 64)), y);
    Tensor t1 = nisa::nc_transpose(xs);                // [96, 128] fp32 PSUM
    Tensor t2 = nisa::nc_transpose(xs(nl::all, nl::ds(0, 32)));
    Tensor t3 = nl::ndarray({128, 64}, nl::float32, nl::psum, "t3");
    nisa::nc_transpose(t3, ys(nl::ds(64, 64)));        // fp16 data: the bf16 identity, rows 64..127
    CHECK(t1.shape() == nki::Shape{96, 128});
    CHECK(t1.dtype() == nl::float32);
    CHECK(t1.buffer() == nki::BufferKind::psum);
    CHECK(t2.shape() == nki::Shape{32, 128});
  });
  // Two constants, each with a diagonal of ones, loaded once each by DMA.
  const ncore::HbmTensor* i32 = p.find_tensor("identity_fp32");
  const ncore::HbmTensor* i16 = p.find_tensor("identity_bf16");
  REQUIRE(i32);
  REQUIRE(i16);
  CHECK(i32->role == ncore::TensorRole::constant);
  CHECK(i32->shape == std::vector<int64_t>{128, 128});
  CHECK(i32->dtype == isa::Dtype::fp32);
  CHECK(i16->dtype == isa::Dtype::bf16);
  REQUIRE(i32->init.size() == i32->bytes);
  REQUIRE(i16->init.size() == i16->bytes);
  for (int r = 0; r < 128; ++r)
    for (int c = 0; c < 128; ++c) {
      float f;
      std::memcpy(&f, &i32->init[(r * 128 + c) * 4], 4);
      uint16_t h;
      std::memcpy(&h, &i16->init[(r * 128 + c) * 2], 2);
      CHECK(f == (r == c ? 1.0f : 0.0f));
      CHECK(h == (r == c ? 0x3F80 : 0));
    }
  CHECK(fwtest::count_opcode(p, Op::dma_copy) == 4);  // x, y and the two identities
  REQUIRE(opcodes(p, kPe) == std::vector<Op>{LS, MM, LS, MM, LS, MM});
  const auto pe = insns(p, kPe);
  // transpose 1: stationary = xs [128, 96], moving = identity [128, 128], dst [96, 128]
  CHECK(pe[0].src0.num_part == 128);
  CHECK(ncore::ap_free_elems(pe[0].src0) == 96);
  CHECK(pe[1].src0.dtype == isa::Dtype::fp32);
  CHECK(pe[1].src0.num_part == 128);
  CHECK(ncore::ap_free_elems(pe[1].src0) == 128);
  CHECK(pe[1].dst.num_part == 96);
  CHECK(ncore::ap_free_elems(pe[1].dst) == 128);
  CHECK_FALSE(pe[1].acc);
  // transpose 3: fp16 data on partitions 64..127, the bf16 identity's diagonal block there
  CHECK(pe[4].src0.dtype == isa::Dtype::fp16);
  CHECK(pe[4].src0.start_part == 64);
  CHECK(pe[5].src0.dtype == isa::Dtype::bf16);
  CHECK(pe[5].src0.start_part == 64);
  CHECK(pe[5].src0.num_part == 64);
  CHECK(ncore::ap_free_elems(pe[5].src0) == 64);
  CHECK(pe[5].dst.num_part == 128);
  CHECK(ncore::ap_free_elems(pe[5].dst) == 64);
  // Each transpose overwrites, even into the same tile again.
  CHECK(acc_flags(p) == std::vector<int>{0, 0, 0});
  REQUIRE_NOTHROW(ncore::validate_program(p, trn2()));
}

TEST_CASE("nc_matmul(stationary, moving) as a Tensor, and unused or reused results", "[firmware][pe]") {
  ncore::Program p = run([&](nki::Tracer&) {
    Tensor s = nl::zeros({128, 32}, nl::float32, nl::sbuf, "s");
    Tensor m = nl::zeros({128, 100}, nl::float32, nl::sbuf, "m");
    Tensor r = nisa::nc_matmul(s, m);
    CHECK(r.shape() == nki::Shape{32, 100});
    CHECK(r.buffer() == nki::BufferKind::psum);
    CHECK(r.dtype() == nl::float32);
    Tensor c = nl::copy(nisa::nc_matmul(s, m), nl::float16);
    CHECK(c.buffer() == nki::BufferKind::sbuf);
    CHECK(c.dtype() == nl::float16);
    CHECK(c.shape() == nki::Shape{32, 100});
  });
  CHECK(acc_flags(p) == std::vector<int>{0, 0});

  int line = 0;
  std::string e = error_of([&](nki::Tracer&) {
    Tensor s = nl::zeros({128, 32}, nl::float32, nl::sbuf, "s");
    line = __LINE__ + 1;
    (void)nisa::nc_matmul(s, s);
    nisa::memset(s, 1.0f);  // the next API call reports it
  });
  CHECK(e == at(line) + "the result of nisa::nc_matmul(stationary, moving) is never used: accumulate it into a PSUM "
                        "tile (psum_tile += nisa::nc_matmul(...)), assign it to a Tensor, or call "
                        "nisa::nc_matmul(dst, stationary, moving)");
  e = error_of([&](nki::Tracer&) {
    Tensor s = nl::zeros({128, 32}, nl::float32, nl::sbuf, "s");
    (void)nisa::nc_matmul(s, s);  // the last statement: reported at the end of the trace
  });
  CHECK_THAT(e, Catch::Contains("is never used"));
  e = error_of([&](nki::Tracer&) {
    Tensor s = nl::zeros({128, 32}, nl::float32, nl::sbuf, "s");
    Tensor d = nl::ndarray({32, 32}, nl::float32, nl::psum, "d");
    auto r = nisa::nc_matmul(s, s);
    d += r;
    d += r;
  });
  CHECK_THAT(e, Catch::Contains("this nisa::nc_matmul(stationary, moving) result has already been used once"));
}

// --- nl.zeros in PSUM (TraceOptions::elide_psum_zeros) -------------------------------------------

TEST_CASE("nl.zeros in PSUM: the memset waits for the tile's first use and is dropped under an overwriting matmul",
          "[firmware][pe]") {
  // mode 0: zeros, then matmuls over the whole tile (+=): no memset. 1: over half of it: the
  // memset comes just before the first matmul. 2: the tile read first (a copy out): the memset
  // comes just before the read. 3: never used: no memset.
  auto body = [](int mode) {
    return [mode](nki::Tracer& t) {
      Tensor s = sbuf_input(t, "a", {128, 128}, nl::bfloat16, "s");
      Tensor m = sbuf_input(t, "b", {128, 512}, nl::bfloat16, "m");
      Tensor z = nl::zeros({128, 512}, nl::float32, nl::psum, "z");
      Tensor out = nl::ndarray({128, 512}, nl::float32, nl::shared_hbm, "out");
      if (mode == 0) {
        z += nisa::nc_matmul(s, m);
        z += nisa::nc_matmul(s, m);
      } else if (mode == 1) {
        Tensor half = z(nl::all, nl::ds(0, 256));
        half += nisa::nc_matmul(s, m(nl::all, nl::ds(0, 256)));
      } else if (mode == 3) {
        nisa::memset(m, 1.0f);
      }
      Tensor r = nl::ndarray({128, 512}, nl::float32, nl::sbuf, "r");
      if (mode != 3) nisa::tensor_copy(r, z);
      else nisa::memset(r, 0.0f);
      nisa::dma_copy(out, r);
      t.output(out);
    };
  };
  auto dve = [](const ncore::Program& p) { return opcodes(p, kDve); };
  nki::TraceStats st;
  nki::TraceOptions o;
  o.stats = &st;
  CHECK(dve(run(body(0), o)) == std::vector<Op>{Op::tensor_copy});
  CHECK(st.psum_zeros_elided == 1);
  CHECK(dve(run(body(1), o)) == std::vector<Op>{Op::memset, Op::tensor_copy});
  CHECK(st.psum_zeros_elided == 0);
  CHECK(dve(run(body(2), o)) == std::vector<Op>{Op::memset, Op::tensor_copy});
  CHECK(dve(run(body(3), o)) == std::vector<Op>{Op::memset, Op::memset});  // m's and r's, not z's
  CHECK(st.psum_zeros_elided == 1);
  nki::TraceOptions keep;
  keep.elide_psum_zeros = false;
  CHECK(dve(run(body(0), keep)) == std::vector<Op>{Op::memset, Op::tensor_copy});

  // The same bits with and without: the first multiply of a group starts from +0 either way.
  for (int mode : {0, 1, 2}) {
    INFO("mode " << mode);
    std::vector<std::vector<uint8_t>> outs;
    for (bool elide : {true, false}) {
      nki::TraceOptions opt;
      opt.elide_psum_zeros = elide;
      const ncore::Program p = run(body(mode), opt);
      ncore::GoldenModel g(trn2(), p.hbm_bytes);
      std::vector<uint16_t> ab(128 * 128), bb(128 * 512);
      for (size_t i = 0; i < ab.size(); ++i) ab[i] = static_cast<uint16_t>(0x3f80 + (i * 7919) % 127 - 63);  // near 1
      for (size_t i = 0; i < bb.size(); ++i) bb[i] = static_cast<uint16_t>(((i * 104729) % 2 ? 0xbf00 : 0x3f00) + i % 97);
      std::memcpy(g.hbm() + p.find_tensor("a")->offset, ab.data(), ab.size() * 2);
      std::memcpy(g.hbm() + p.find_tensor("b")->offset, bb.data(), bb.size() * 2);
      g.run(p);
      const ncore::HbmTensor* ot = p.find_tensor("out");
      outs.emplace_back(g.hbm() + ot->offset, g.hbm() + ot->offset + ot->bytes);
    }
    CHECK(outs[0] == outs[1]);
    // mode 2 copies the zeros out; the others hold products
    CHECK(std::any_of(outs[0].begin(), outs[0].end(), [](uint8_t x) { return x != 0; }) == (mode != 2));
  }
}
