// The tensor-engine API's PSUM allocation (whole banks, rotation in loops, no bank crossing),
// nl::zeros / nl::copy, and every tensor-engine constraint error in NKI's words.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cstring>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "ncore/validate.hpp"
#include "pe_test.hpp"

using namespace pe_test;

namespace {

std::string at(int line) { return at_line(__FILE__, line); }

// The destination of most nc_matmul error cases: a [128, 512] float32 PSUM tile.
const Tile kPsumD{{128, 512}, nl::float32, nl::psum, "d"};

// call_error of nisa::nc_matmul(dst, stationary, moving) on new tiles; *line: the line of the call.
std::string matmul_error(const Tile& stationary, const Tile& moving, const Tile& dst, int* line = nullptr) {
  return call_error({stationary, moving, dst}, [&](const Tiles& t) {
    if (line) *line = __LINE__ + 1;
    nisa::nc_matmul(t[2], t[0], t[1]);
  });
}

}  // namespace

// --- PSUM allocation ----------------------------------------------------------------------------

TEST_CASE("PSUM tiles take whole banks, and the ninth does not fit", "[firmware][pe][allocator]") {
  std::vector<uint64_t> offsets;
  ncore::Program p = run([&](nki::Tracer&) {
    std::vector<Tensor> held;  // a tile gives its bank back when its last view is gone
    for (int k = 0; k < 8; ++k) {
      held.push_back(nl::ndarray({128, k == 0 ? 1 : 64 * k}, k % 2 ? nl::bfloat16 : nl::float32, nl::psum));
      nisa::memset(held.back(), 0.0f);
    }
  });
  for (const auto& i : insns(p, kDve)) offsets.push_back(i.dst.offset);
  CHECK(offsets == std::vector<uint64_t>{0, 2048, 4096, 6144, 8192, 10240, 12288, 14336});
  int line = 0;
  const std::string e = error_of([&](nki::Tracer&) {
    std::vector<Tensor> held;
    for (int k = 0; k < 8; ++k) held.push_back(nl::ndarray({128, 1}, nl::float32, nl::psum, fmt::format("p{}", k)));
    line = __LINE__ + 1;
    nl::ndarray({1, 1}, nl::float32, nl::psum, "ninth");
  });
  CHECK(e == at(line) + "PSUM allocation failed for tensor `ninth`: it needs 1 bank of 2048 bytes per partition, but "
                        "only 0 of the 8 PSUM banks are free");
}

TEST_CASE("a PSUM tile must fit one bank (psum_fmax), and block dimensions take a bank each", "[firmware][pe][allocator]") {
  const int line = __LINE__ + 1;
  std::string e = alloc_error({{{128, 513}, nl::float32, nl::psum, "big"}});
  CHECK(e == at(line) + "PSUM tile `big` of shape [128, 513] float32 needs 2052 bytes per partition, but a PSUM tile "
                        "must fit one 2048-byte bank (psum_fmax: 512 float32 per partition); a tile may not cross a "
                        "bank");
  CHECK_THAT(error_of([&](nki::Tracer&) { nl::ndarray({128, 2, 300}, nl::float32, nl::psum, "b3"); }),
             Catch::Contains("needs 2400 bytes per partition"));
  CHECK(error_of([&](nki::Tracer&) { nl::ndarray({128, 1024}, nl::bfloat16, nl::psum, "fits"); }) == "<no error>");
  std::vector<uint64_t> offsets;
  ncore::Program p = run([&](nki::Tracer&) {
    Tensor one = nl::ndarray({128, 8}, nl::float32, nl::psum, "one");
    Tensor blk = nl::ndarray({3, nl::par_dim(128), 512}, nl::float32, nl::psum, "blk");
    for (int b = 0; b < 3; ++b) nisa::memset(blk[b], 0.0f);
    nisa::memset(one, 0.0f);
  });
  for (const auto& i : insns(p, kDve)) offsets.push_back(i.dst.offset);
  CHECK(offsets == std::vector<uint64_t>{2048, 4096, 6144, 0});
}

TEST_CASE("PSUM tiles in loops rotate over banks, and the ring shrinks to the free banks", "[firmware][pe][allocator]") {
  auto dsts = [](int held, int64_t trip) {
    std::vector<uint64_t> v;
    ncore::Program p = run([&](nki::Tracer&) {
      Tensor s = nl::zeros({128, 128}, nl::bfloat16, nl::sbuf, "s");
      std::vector<Tensor> keep;
      for (int k = 0; k < held; ++k) keep.push_back(nl::ndarray({128, 1}, nl::float32, nl::psum));
      for (int64_t i : nl::affine_range(trip)) {
        (void)i;
        Tensor d = nl::ndarray({128, 512}, nl::float32, nl::psum, "d");
        nisa::nc_matmul(d(nl::all, nl::ds(0, 128)), s, s);
      }
    });
    for (const auto& i : insns(p, kPe))
      if (i.opcode == Op::multiply_moving) v.push_back(i.dst.offset);
    return v;
  };
  CHECK(dsts(0, 6) == std::vector<uint64_t>{0, 2048, 4096, 6144, 0, 2048});
  CHECK(dsts(0, 2) == std::vector<uint64_t>{0, 2048});
  CHECK(dsts(6, 5) == std::vector<uint64_t>{12288, 14336, 12288, 14336, 12288});
  CHECK(dsts(7, 3) == std::vector<uint64_t>{14336, 14336, 14336});
  CHECK_THAT(error_of([&](nki::Tracer&) {
               std::vector<Tensor> held;
               for (int k = 0; k < 8; ++k) held.push_back(nl::ndarray({128, 1}, nl::float32, nl::psum));
               for (int64_t i : nl::affine_range(2)) {
                 (void)i;
                 nl::ndarray({128, 512}, nl::float32, nl::psum, "d");
               }
             }),
             Catch::Contains("PSUM allocation failed for tensor `d`"));
}

// --- constraint errors ----------------------------------------------------------------------------

TEST_CASE("nc_matmul: moving free size above 512 (gemm_moving_fmax)", "[firmware][pe][constraints]") {
  int line = 0;
  const std::string e = matmul_error({{128, 128}, nl::bfloat16, nl::sbuf, "lhsT_tile"},
                                     {{128, 1024}, nl::bfloat16, nl::sbuf, "rhs_tile"}, kPsumD, &line);
  CHECK(e == at(line) + "size of dimension 1 in 'rhs_tile[128, 1024]' of 'nc_matmul' exceed architecture limitation "
                        "of 512. (operand 'moving' of 'nc_matmul': gemm_moving_fmax)");
  CHECK_THAT(call_error({{{128, 128}, nl::bfloat16, nl::sbuf, "s"}, {{128, 2, 300}, nl::bfloat16, nl::sbuf, "m3"}},
                        [](const Tiles& t) { (void)nki::Tensor(nisa::nc_matmul(t[0], t[1])); }),
             Catch::Contains("free size 600 (dimensions 1 to 2, flattened) in 'm3[128, 2, 300]' of 'nc_matmul' exceed "
                             "architecture limitation of 512."));
}

TEST_CASE("nc_matmul: stationary free size above 128 (gemm_stationary_fmax)", "[firmware][pe][constraints]") {
  int line = 0;
  const std::string e = call_error({{{128, 256}, nl::float32, nl::sbuf, "w"}, {{128, 512}, nl::float32, nl::sbuf, "x"}},
                                   [&](const Tiles& t) {
                                     line = __LINE__ + 1;
                                     Tensor r = nisa::nc_matmul(t[0], t[1]);
                                   });
  CHECK(e == at(line) + "size of dimension 1 in 'w[128, 256]' of 'nc_matmul' exceed architecture limitation of 128. "
                        "(operand 'stationary' of 'nc_matmul': gemm_stationary_fmax)");
}

TEST_CASE("nc_matmul: partitions above 128 and contraction dimensions that differ", "[firmware][pe][constraints]") {
  CHECK_THAT(error_of([&](nki::Tracer&) { nl::ndarray({256, 128}, nl::float32, nl::sbuf, "s"); }),
             Catch::Contains("number of partitions 256 exceed architecture limitation of 128."));
  int line = 0;
  const std::string e = error_of([&](nki::Tracer&) {
    Tensor s = nl::ndarray({128, 128}, nl::float32, nl::sbuf, "s");
    Tensor m = nl::ndarray({64, 512}, nl::float32, nl::sbuf, "m");
    Tensor d = nl::ndarray({128, 512}, nl::float32, nl::psum, "d");
    line = __LINE__ + 1;
    d += nisa::nc_matmul(s, m);
  });
  CHECK(e == at(line) + "number of partitions (dimension 0 size of a tile) mismatch in parameters (stationary[128, "
                        "128], moving[64, 512]) of 'nc_matmul' (the contraction dimension K)");
}

TEST_CASE("nc_matmul: operands in the wrong buffer", "[firmware][pe][constraints]") {
  int line = 0;
  std::string e =
      matmul_error({{128, 128}, nl::float32, nl::psum, "s"}, {{128, 512}, nl::float32, nl::sbuf, "m"}, kPsumD, &line);
  CHECK(e == at(line) + "Expected operand 'stationary' of 'nc_matmul' to be in address space 'sbuf', but got a tile "
                        "in 'psum' instead.");
  e = matmul_error({{128, 128}, nl::float32, nl::sbuf, "s"}, {{128, 512}, nl::float32, nl::hbm, "m"}, kPsumD);
  CHECK_THAT(e, Catch::Contains("Expected operand 'moving' of 'nc_matmul' to be in address space 'sbuf', but got a "
                                "tile in 'hbm' instead."));
  e = call_error({{{128, 128}, nl::float32, nl::sbuf, "s"}, {{128, 128}, nl::float32, nl::sbuf, "d"}},
                 [](const Tiles& t) { nisa::nc_matmul(t[1], t[0], t[0]); });
  CHECK_THAT(e, Catch::Contains("Expected operand 'dst' of 'nc_matmul' to be in address space 'psum', but got a "
                                "tile in 'sbuf' instead."));
  e = error_of([&](nki::Tracer&) {
    Tensor p = nl::ndarray({128, 128}, nl::float32, nl::psum, "p");
    Tensor r = nisa::nc_transpose(p);
  });
  CHECK_THAT(e, Catch::Contains("Expected operand 'data' of 'nc_transpose' to be in address space 'sbuf', but got a "
                                "tile in 'psum' instead."));
}

TEST_CASE("nc_matmul: dtype pairs and the PSUM result", "[firmware][pe][constraints]") {
  int line = 0;
  std::string e = call_error({{{128, 128}, nl::float32, nl::sbuf, "s"}, {{128, 512}, nl::bfloat16, nl::sbuf, "m"}},
                             [&](const Tiles& t) {
                               line = __LINE__ + 1;
                               Tensor r = nisa::nc_matmul(t[0], t[1]);
                             });
  CHECK(e == at(line) + "'nc_matmul' cannot multiply a float32 stationary (s[128, 128]) by a bfloat16 moving "
                        "(m[128, 512]) operand: float32 "
                        "and tfloat32 pair only with float32 or tfloat32");
  CHECK_THAT(call_error({{{128, 128}, nl::float16, nl::sbuf, "s"}, {{128, 512}, nl::float32, nl::sbuf, "m"}},
                        [](const Tiles& t) { Tensor r = nisa::nc_matmul(t[0], t[1]); }),
             Catch::Contains("cannot multiply a float16 stationary"));
  CHECK(error_of([&](nki::Tracer&) {
          Tensor s = nl::zeros({128, 128}, nl::float16, nl::sbuf, "s");
          Tensor m = nl::zeros({128, 512}, nl::bfloat16, nl::sbuf, "m");
          Tensor r = nisa::nc_matmul(s, m);
        }) == "<no error>");
  e = matmul_error({{128, 128}, nl::bfloat16, nl::sbuf, "s"}, {{128, 512}, nl::bfloat16, nl::sbuf, "m"},
                   {{128, 512}, nl::bfloat16, nl::psum, "d"}, &line);
  CHECK(e == at(line) + "operand 'dst' of 'nc_matmul' (d[128, 512]) is bfloat16, but the tensor engine writes float32 "
                        "to PSUM");
  e = matmul_error({{128, 64}, nl::bfloat16, nl::sbuf, "s"}, {{128, 512}, nl::bfloat16, nl::sbuf, "m"}, kPsumD);
  CHECK_THAT(e, Catch::Contains("operand 'dst' of 'nc_matmul' (d[128, 512]) has 128 partitions x 512 elements, but "
                                "stationary.T @ moving is [64, 512]"));
  e = error_of([&](nki::Tracer&) {
    Tensor s = nl::zeros({128, 128}, nl::bfloat16, nl::sbuf, "s");
    Tensor m = nl::zeros({128, 256}, nl::bfloat16, nl::sbuf, "m");
    Tensor d = nl::ndarray({128, 512}, nl::float32, nl::psum, "d");
    nisa::nc_matmul(d(nl::all, nl::ds(0, 256)), s, m, true);
    nisa::nc_matmul(d(nl::all, nl::ds(0, 256)), s, m);  // the same region: accumulates
    line = __LINE__ + 1;
    nisa::nc_matmul(d(nl::all, nl::ds(64, 128)), s, m(nl::all, nl::ds(0, 128)));  // inside it: ambiguous
  });
  CHECK(e == at(line) + "cannot infer accumulate for 'nc_matmul' into d[128, 128]: its PSUM region (partitions "
                        "[0, 128), bytes [256, 768)) overlaps, without being the same region, the accumulation group "
                        "of an earlier matmul (partitions [0, 128), bytes [0, 1024)) that has not been read; pass "
                        "accumulate=true or false explicitly");
  e = call_error({{{128, 128}, nl::bfloat16, nl::sbuf, "s"}, {{128, 128}, nl::bfloat16, nl::sbuf, "m"}, kPsumD},
                 [](const Tiles& t) {
                   nisa::nc_matmul(t[2](nl::all, nl::ds(0, 256)), t[0], t[1](nl::all, nl::ds(0, 64)), true);
                 });
  CHECK_THAT(e, Catch::Contains("(d[128, 256]) has 128 partitions x 256 elements, but stationary.T @ moving is "
                                "[128, 64]"));
}

TEST_CASE("nc_transpose: input above [128, 128], more than 2 dimensions, the destination", "[firmware][pe][constraints]") {
  int line = 0;
  std::string e = call_error({{{128, 512}, nl::bfloat16, nl::sbuf, "x"}}, [&](const Tiles& t) {
    line = __LINE__ + 1;
    Tensor r = nisa::nc_transpose(t[0]);
  });
  CHECK(e == at(line) + "size of dimension 1 in 'x[128, 512]' of 'transpose' exceed architecture limitation of 128. "
                        "(operand 'data' of 'nc_transpose')");
  CHECK_THAT(e, Catch::Contains("size of dimension 1 in 'x[128, 512]' of 'transpose' exceed architecture limitation "
                                "of 128."));
  e = call_error({{{64, 32, 2}, nl::float32, nl::sbuf, "x"}}, [&](const Tiles& t) {
    line = __LINE__ + 1;
    Tensor r = nisa::nc_transpose(t[0]);
  });
  CHECK(e == at(line) + "parameter 'x[64, 32, 2]' of 'transpose' exceed max supported number of dimensions of 2.");
  const auto transpose_error = [](const Tile& dst) {
    return call_error({{{128, 64}, nl::float32, nl::sbuf, "x"}, dst},
                      [](const Tiles& t) { nisa::nc_transpose(t[1], t[0]); });
  };
  e = transpose_error({{64, 128}, nl::bfloat16, nl::psum, "d"});
  CHECK_THAT(e, Catch::Contains("operand 'dst' of 'nc_transpose' (d[64, 128]) is bfloat16, but the tensor engine "
                                "writes float32 to PSUM"));
  e = transpose_error({{128, 64}, nl::float32, nl::psum, "d"});
  CHECK_THAT(e, Catch::Contains("(d[128, 64]) has 128 partitions x 64 elements, but the transpose of data is [64, "
                                "128]"));
  e = transpose_error({{64, 128}, nl::float32, nl::sbuf, "d"});
  CHECK_THAT(e, Catch::Contains("Expected operand 'dst' of 'nc_transpose' to be in address space 'psum', but got a "
                                "tile in 'sbuf' instead."));
}

TEST_CASE("nl::zeros and nl::copy", "[firmware][pe][constraints]") {
  int line = 0;
  const std::string e = error_of([&](nki::Tracer&) {
    line = __LINE__ + 1;
    nl::zeros({128, 4}, nl::float32, nl::shared_hbm, "z");
  });
  CHECK(e == at(line) + "nl.zeros in shared_hbm: an HBM tensor with an initial value is not supported "
                        "(err_hbm_tensor_with_init_value_not_supported); create it with nl.ndarray and write it");
  ncore::Program p = run([&](nki::Tracer&) {
    Tensor z = nl::zeros({128, 16}, nl::bfloat16, nl::sbuf, "z");
    Tensor c = nl::copy(z);
    Tensor f = nl::copy(z, nl::float32);
    CHECK(c.dtype() == nl::bfloat16);
    CHECK(f.dtype() == nl::float32);
  });
  const auto dve = insns(p, kDve);
  REQUIRE(dve.size() == 3);
  CHECK(dve[0].opcode == Op::memset);
  CHECK(dve[0].imm0 == 0u);
  CHECK(dve[1].opcode == Op::tensor_copy);
  CHECK(dve[2].dst.dtype == isa::Dtype::fp32);
}
