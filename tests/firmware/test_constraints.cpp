// Every constraint the API checks at trace time, with NKI's wording and the kernel location.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "exec_check.hpp"
#include "ncore/error.hpp"
#include "nki/nki.hpp"
#include "kernels/kernel.hpp"

namespace {

namespace nl = nki::nl;
namespace nisa = nki::nisa;
using fwtest::alloc_error;
using fwtest::call_error;
using fwtest::Tile;
using fwtest::Tiles;
using nki::Tensor;

const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

std::string error_of(const std::function<void(nki::Tracer&)>& body) { return fwtest::trace_error(body); }

std::string at(int line) { return fmt::format("tests/firmware/test_constraints.cpp:{}: ", line); }

std::string build_error(kernels::Args a) {
  try {
    kernels::build(a, trn2());
  } catch (const ncore::KernelError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("partition dimension above 128", "[firmware][constraints]") {
  const int line = __LINE__ + 1;
  const std::string e = alloc_error({{{256, 1}, nl::float32, nl::sbuf, "x"}});
  CHECK(e == at(line) + "number of partitions 256 exceed architecture limitation of 128. (tensor `x` of shape [256, 1])");
  CHECK_THAT(e, Catch::Contains("number of partitions 256 exceed architecture limitation of 128."));

  kernels::Args a;
  a.kernel = "tiled";
  a.set("n", 25600);
  a.set("row_chunk", 256);
  CHECK_THAT(build_error(a), Catch::StartsWith("kernels/src/vector_add.cpp:") &&
                                 Catch::Contains("number of partitions 256 exceed architecture limitation of 128."));
  a.kernel = "naive";
  a.given.erase("row_chunk");
  a.set("n", 200);
  CHECK_THAT(build_error(a), Catch::Contains("number of partitions 200 exceed architecture limitation of 128."));
}

TEST_CASE("partition count mismatch between operands", "[firmware][constraints]") {
  int line = 0;
  const auto add = [&](const Tiles& t) {
    line = __LINE__ + 1;
    nisa::tensor_tensor(t[0], t[1], nl::add);
  };
  const Tile a{{128, 512}, nl::float32, nl::sbuf, "a"};
  const std::string e = call_error({a, {{1, 512}, nl::float32, nl::sbuf, "b"}}, add);
  CHECK(e == at(line) + "number of partitions (dimension 0 size of a tile) mismatch in parameters (data1[128, 512], "
                        "data2[1, 512]) of 'tensor_tensor'");
  const std::string e2 = call_error({a, {{128, 256}, nl::float32, nl::sbuf, "b"}}, add);
  CHECK_THAT(e2, Catch::Contains("number of elements per partition mismatch in parameters (data1[128, 512], "
                                 "data2[128, 256]) of 'tensor_tensor'"));
}

TEST_CASE("operand in the wrong buffer", "[firmware][constraints]") {
  int line = 0;
  const Tile x{{128, 4}, nl::float32, nl::hbm, "x"};  // the kernel input
  std::string e = call_error({x, {{128, 4}, nl::float32, nl::sbuf, "b"}}, [&](const Tiles& t) {
    line = __LINE__ + 1;
    nisa::tensor_tensor(t[0], t[1], nl::add);
  });
  CHECK(e == at(line) + "Expected operand 'data1' of 'tensor_tensor' to be in address space 'sbuf' or 'psum', but got "
                        "a tile in 'hbm' instead.");
  e = call_error({x, {{128, 4}, nl::float32, nl::psum, "p"}}, [](const Tiles& t) { nisa::dma_copy(t[0], t[1]); });
  CHECK_THAT(e, Catch::Contains("Expected operand 'src' of 'dma_copy' to be in address space 'hbm' or 'sbuf', but got "
                                "a tile in 'psum' instead."));
  e = call_error({x, {{128, 4}, nl::float32, nl::sbuf, "d"}},
                 [](const Tiles& t) { nisa::tensor_scalar(t[1], t[0], nl::add, 1.0f); });
  CHECK_THAT(e, Catch::Contains("Expected operand 'data' of 'tensor_scalar' to be in address space 'sbuf' or 'psum', "
                                "but got a tile in 'hbm' instead."));
}

TEST_CASE("out-of-bound slices and indices", "[firmware][constraints]") {
  int line = 0;
  std::string e = error_of([&](nki::Tracer& t) {
    Tensor x = t.input("x", {128, 4000}, nl::float32);
    line = __LINE__ + 1;
    Tensor s = x(nl::ds(0, 128), nl::ds(0, 4096));
  });
  CHECK(e == at(line) + "Out-of-bound access for tensor `x` on dimension 1: index range [0, 4095] exceed dimension "
                        "size of 4000");
  e = error_of([&](nki::Tracer& t) {
    Tensor x = t.input("x", {128, 4000}, nl::float32);
    Tensor s = x(nl::ds(120, 16));
  });
  CHECK_THAT(e, Catch::Contains("Out-of-bound access for tensor `x` on dimension 0: index range [120, 135] exceed "
                                "dimension size of 128"));
  e = error_of([&](nki::Tracer& t) {
    Tensor x = t.input("x", {4, 10}, nl::float32);
    Tensor s = x[4];
  });
  CHECK_THAT(e, Catch::Contains("Out-of-bound access for tensor `x` on dimension 0: index range [4, 4] exceed "
                                "dimension size of 4"));
  e = error_of([&](nki::Tracer& t) {
    Tensor x = t.input("x", {4, 10}, nl::float32);
    Tensor s = x(1, 2, 3);
  });
  CHECK_THAT(e, Catch::Contains("too many indices for tensor `x` of shape [4, 10]: 3 given"));
}

TEST_CASE("free size above 64K elements per partition", "[firmware][constraints]") {
  int line = 0;
  const std::string e = error_of([&](nki::Tracer&) {
    Tensor t = nl::ndarray({128, 70000}, nl::bfloat16, nl::sbuf, "t");
    line = __LINE__ + 1;
    nisa::memset(t, 0.0f);
  });
  CHECK(e == at(line) + "free size of operand 'dst' of 'memset' (t[128, 70000]) is 70000 elements per partition, "
                        "exceeding the architecture limitation of 65536.");
  CHECK(error_of([&](nki::Tracer&) {
          Tensor t = nl::ndarray({128, 65536}, nl::bfloat16, nl::sbuf, "t");
          nisa::memset(t, 0.0f);
        }) == "<no error>");
}

TEST_CASE("tensor_scalar operand must be a scalar or (P, 1)", "[firmware][constraints]") {
  int line = 0;
  std::string e = error_of([&](nki::Tracer&) {
    Tensor a = nl::ndarray({128, 8}, nl::float32, nl::sbuf, "a");
    Tensor b = nl::ndarray({128, 2}, nl::float32, nl::sbuf, "b");
    line = __LINE__ + 1;
    nisa::tensor_scalar(a, nl::add, b);
  });
  CHECK(e == at(line) + "operand0 of 'tensor_scalar' must be a scalar or a tile of shape (P, 1) with P = 128 (the "
                        "partitions of data a[128, 8]), but got b[128, 2]");
  e = error_of([&](nki::Tracer&) {
    Tensor a = nl::ndarray({128, 8}, nl::float32, nl::sbuf, "a");
    Tensor b = nl::ndarray({64, 1}, nl::float32, nl::sbuf, "b");
    nisa::tensor_scalar(a, nl::add, 1.0f, false, nl::multiply, b);
  });
  CHECK_THAT(e, Catch::Contains("operand1 of 'tensor_scalar' must be a scalar or a tile of shape (P, 1) with P = 128"));
  CHECK(error_of([&](nki::Tracer&) {
          Tensor a = nl::ndarray({128, 8}, nl::float32, nl::sbuf, "a");
          Tensor b = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "b");
          nisa::tensor_scalar(a, nl::add, b, false, nl::multiply, 3.0);
        }) == "<no error>");
}

TEST_CASE("start partition rules", "[firmware][constraints]") {
  auto memset_rows = [](int64_t start, int64_t n) {
    return error_of([&](nki::Tracer&) {
      Tensor t = nl::ndarray({128, 16}, nl::float32, nl::sbuf, "t");
      nisa::memset(t(nl::ds(start, n)), 0.0f);
    });
  };
  for (int64_t s : {0, 32, 64, 96}) CHECK(memset_rows(s, 32) == "<no error>");
  for (int64_t s : {0, 64}) CHECK(memset_rows(s, 64) == "<no error>");
  CHECK(memset_rows(0, 128) == "<no error>");
  CHECK(memset_rows(5, 1) != "<no error>");
  CHECK_THAT(memset_rows(16, 32), Catch::Contains("operand 'dst' of 'memset' (t[32, 16]) starts at partition 16, but an "
                                                  "access of 1-32 partitions must start at partition 0, 32, 64 or 96"));
  CHECK_THAT(memset_rows(32, 64),
             Catch::Contains("starts at partition 32, but an access of 33-64 partitions must start at partition 0 or 64"));
  CHECK_THAT(memset_rows(1, 65),
             Catch::Contains("starts at partition 1, but an access of 65-128 partitions must start at partition 0"));
}

TEST_CASE("SBUF capacity", "[firmware][constraints]") {
  const Tile a{{128, 50000}, nl::float32, nl::sbuf, "a"};  // 200000 bytes
  const Tile b{{128, 4000}, nl::float32, nl::sbuf, "b"};   // 16000 more do not fit
  const int line = __LINE__ + 1;
  const std::string e = alloc_error({a, b});
  // 212984 usable - 200000 = 12984 free.
  CHECK(e == at(line) + "SBUF allocation failed for tensor `b`: it needs 16000 bytes per partition, but the largest "
                        "free range is 12984 bytes (12984 of the 212984 usable bytes per partition are free)");
}

TEST_CASE("every NKI dtype is modelled: a tile of each", "[firmware][constraints]") {
  for (const nki::DtypeInfo& i : nki::dtype_table()) {
    INFO(i.name);
    CHECK(i.modelled);
    CHECK(error_of([&](nki::Tracer&) { nl::ndarray({128, 4}, i.dtype, nl::sbuf, "t"); }) == "<no error>");
    CHECK(error_of([&](nki::Tracer& t) { t.input("x", {4}, i.dtype); }) == "<no error>");
  }
}

TEST_CASE("dma_copy shapes", "[firmware][constraints]") {
  // A 1-D HBM slice of 128 elements into a (128, 1) tile, and a (2, 64) block into (128, 1): reshaped.
  CHECK(error_of([&](nki::Tracer& t) {
          Tensor x = t.input("x", {256}, nl::float32);
          Tensor y = t.input("y", {2, 64}, nl::float32);
          Tensor a = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "a");
          nisa::dma_copy(a, x(nl::ds(128, 128)));
          nisa::dma_copy(a, y);
        }) == "<no error>");
  int line = 0;
  std::string e = error_of([&](nki::Tracer& t) {
    Tensor x = t.input("x", {256}, nl::float32);
    Tensor a = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "a");
    line = __LINE__ + 1;
    nisa::dma_copy(a, x);
  });
  CHECK(e == at(line) + "Illegal assignment destination shape in 'dma_copy': dst a[128, 1] cannot receive src x[256]: "
                        "256 elements vs 128 (128 partitions x 1 elements)");
  // Columns of a matrix cannot be read as (128, 2) rows of another shape without a copy.
  e = error_of([&](nki::Tracer& t) {
    Tensor x = t.input("x", {64, 8}, nl::float32);
    Tensor a = nl::ndarray({128, 2}, nl::float32, nl::sbuf, "a");
    nisa::dma_copy(a, x(nl::all, nl::ds(0, 4)));
  });
  CHECK_THAT(e, Catch::Contains("Illegal assignment destination shape in 'dma_copy'") &&
                    Catch::Contains("cannot be read as [128, 2] without a copy"));
  e = error_of([&](nki::Tracer&) {
    Tensor a = nl::ndarray({128, 4}, nl::float32, nl::sbuf, "a");
    Tensor b = nl::ndarray({64, 8}, nl::float32, nl::sbuf, "b");
    nisa::dma_copy(a, b);
  });
  CHECK_THAT(e, Catch::Contains("number of partitions (dimension 0 size of a tile) mismatch in parameters (dst[128, 4], "
                                "src[64, 8]) of 'dma_copy'"));
}

TEST_CASE("reshape rules", "[firmware][constraints]") {
  CHECK(error_of([&](nki::Tracer& t) {
          Tensor x = t.input("x", {25600}, nl::float32);
          Tensor r = x.reshape({128, 200});
          Tensor back = r(nl::ds(0, 64)).reshape({64, 10, 20});
          CHECK(back.shape() == nki::Shape{64, 10, 20});
        }) == "<no error>");
  std::string e = error_of([&](nki::Tracer& t) {
    Tensor x = t.input("x", {128, 200}, nl::float32);
    Tensor c = x(nl::all, nl::ds(0, 100)).reshape({12800});
  });
  CHECK_THAT(e, Catch::Contains("cannot reshape tensor `x` of shape [128, 100] into [12800]: the view's strides do not "
                                "allow it without a copy"));
  e = error_of([&](nki::Tracer& t) {
    Tensor x = t.input("x", {128, 200}, nl::float32);
    Tensor c = x.reshape({100, 100});
  });
  CHECK_THAT(e, Catch::Contains("25600 elements cannot become 10000"));
  e = error_of([&](nki::Tracer&) {
    Tensor a = nl::ndarray({128, 4}, nl::float32, nl::sbuf, "a");
    Tensor c = a.reshape({64, 8});
  });
  CHECK_THAT(e, Catch::Contains("the block and partition dimensions must stay in front, unchanged"));
}

TEST_CASE("kernel preconditions and registry arguments", "[firmware][constraints]") {
  kernels::Args a;
  a.kernel = "tiled";
  a.set("n", 25601);
  CHECK_THAT(build_error(a), Catch::Contains("vector length 25601 is not a multiple of ROW_CHUNK * 1 = 128"));
  a.kernel = "stream";
  a.set("free_dim", 200);
  CHECK_THAT(build_error(a),
             Catch::Contains("vector length 25601 is not a multiple of PARTITION_DIM * FREE_DIM = 128 * 200 = 25600"));
  a.kernel = "direct_alloc";
  a.given.erase("free_dim");
  a.set("n", 25600);
  CHECK_THAT(build_error(a), Catch::Contains("vector length 25600 is not a multiple of PARTITION_DIM * FREE_DIM"));
  a.kernel = "nope";
  CHECK_THAT(build_error(a), Catch::Contains("unknown kernel 'nope' (known: naive, tiled, stream, direct_alloc, "
                                             "direct_alloc_bad, transpose, matmul, matmul_blocked, conv"));
  a.kernel = "naive";
  a.set("n", 0);
  CHECK_THAT(build_error(a), Catch::Contains("-n: kernel naive needs its vector length"));
  a.set("n", 128);
  a.dma_queues = 17;
  CHECK_THAT(build_error(a), Catch::Contains("dma_queues_used 17 is outside 1..16"));
}

TEST_CASE("API use outside a trace, instruction validation, misc", "[firmware][constraints]") {
  CHECK_THROWS_WITH(nl::ndarray({128, 1}, nl::float32, nl::sbuf),
                    Catch::Contains("'ndarray' called outside of a kernel being traced"));
  // validate_insn runs on every traced instruction; PSUM operands of the vector engine are valid.
  std::string e = error_of([&](nki::Tracer&) {
    Tensor p = nl::ndarray({128, 4}, nl::float32, nl::psum, "p");
    nisa::memset(p, 0.0f);
  });
  CHECK(e == "<no error>");
  e = error_of([&](nki::Tracer&) {
    Tensor a = nl::ndarray({4, nki::nl::par_dim(128), 8}, nl::float32, nl::sbuf, "blk");
    nisa::memset(a, 0.0f);
  });
  CHECK_THAT(e, Catch::Contains("spans 4 logical tiles on dimension 0; select one tile (t[m]) per instruction"));
  e = error_of([&](nki::Tracer&) {
    Tensor a = nl::ndarray({128, 8}, nl::float32, nl::sbuf, "a");
    Tensor b = nl::ndarray({128, 8}, nl::float32, nl::sbuf, "b");
    nisa::tensor_tensor(a(nl::ds(0, 32)), b(nl::ds(32, 32)), nl::add);
  });
  CHECK_THAT(e, Catch::Contains("operands of 'tensor_tensor' must be on the same partitions"));
  e = error_of([&](nki::Tracer& t) {
    t.input("x", {4}, nl::float32);
    t.input("x", {4}, nl::float32);
  });
  CHECK_THAT(e, Catch::Contains("there is already an HBM tensor named `x`"));
  e = error_of([&](nki::Tracer& t) {
    Tensor x = t.input("x", {8}, nl::float32);
    t.output(x(nl::ds(0, 4)));
  });
  CHECK_THAT(e, Catch::Contains("must be a whole HBM tensor"));
  Tensor kept;
  nki::trace("one", trn2(), [&](nki::Tracer& t) { kept = t.input("x", {128}, nl::float32); });
  e = error_of([&](nki::Tracer&) {
    Tensor a = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "a");
    nisa::dma_copy(a, kept);
  });
  CHECK_THAT(e, Catch::Contains("operand 'src' of 'dma_copy' is tensor `x` of another trace"));
  e = error_of([&](nki::Tracer& t) { t.output(kept); });
  CHECK_THAT(e, Catch::Contains("tensor `x` belongs to another trace"));
}
