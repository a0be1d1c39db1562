// The on-chip allocator: the byte-range allocator itself, and tile placement as the tracer
// does it (rotation rings in loops, top-level tiles, capacity errors, mod_alloc placement and
// its interplay with automatic tiles).
#include <catch2/catch.hpp>

#include "exec_check.hpp"
#include "ncore/allocator.hpp"
#include "ncore/error.hpp"
#include "nki/nki.hpp"
#include "kernels/kernel.hpp"

namespace {

namespace isa = ncore::isa;
namespace nl = nki::nl;
namespace nisa = nki::nisa;
namespace ncc = nki::ncc;
using nki::Tensor;

const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

ncore::Program run(const std::function<void(nki::Tracer&)>& body, const ncore::Preset& pr = trn2()) {
  return nki::trace("test", pr, body);
}

// Destination (partition, byte offset) of every memset, in issue order (all on the dve stream).
std::vector<std::pair<uint32_t, uint64_t>> memset_places(const ncore::Program& p) {
  std::vector<std::pair<uint32_t, uint64_t>> v;
  for (const auto& i : p.streams[ncore::Program::stream_index(isa::Engine::dve, 0)].insns)
    if (i.insn.opcode == isa::Opcode::memset) v.emplace_back(i.insn.dst.start_part, i.insn.dst.offset);
  return v;
}

std::vector<uint64_t> memset_offsets(const ncore::Program& p) {
  std::vector<uint64_t> v;
  for (const auto& pl : memset_places(p)) v.push_back(pl.second);
  return v;
}

std::string kernel_error(const std::function<void(nki::Tracer&)>& body, const ncore::Preset& pr = trn2()) {
  try {
    run(body, pr);
  } catch (const ncore::KernelError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("SbufAllocator: first fit at 64-byte boundaries", "[firmware][allocator]") {
  ncore::SbufAllocator a(1024, 64);
  CHECK(a.allocate(100) == 0u);
  CHECK(a.allocate(10) == 128u);  // 100 rounded up to the next 64-byte boundary
  CHECK(a.allocate(64) == 192u);
  a.release(0);
  CHECK(a.allocate(64) == 0u);  // the freed range is reused first
  CHECK(a.allocate(65) == 256u);
  CHECK(a.total_free() == 1024u - (64 + 10 + 64 + 65));
  CHECK_THROWS(a.release(5));
  CHECK_FALSE(a.allocate(2048).has_value());
}

TEST_CASE("SbufAllocator: explicit regions are never handed out", "[firmware][allocator]") {
  ncore::SbufAllocator a(1000, 64);
  CHECK_FALSE(a.reserve(0, 300).has_value());
  CHECK_FALSE(a.reserve(200, 400).has_value());  // overlapping explicit regions are allowed
  CHECK(a.allocate(10) == 448u);                 // first 64-byte boundary at or after 400
  CHECK(a.largest_free() == 1000u - 458u);
  // A region over an automatic allocation is reported.
  const auto clash = a.reserve(440, 450);
  REQUIRE(clash.has_value());
  CHECK(clash->first == 448u);
  CHECK(clash->second == 458u);
  CHECK(a.free_ranges() ==
        std::vector<ncore::SbufAllocator::Range>{{400, 440}, {458, 1000}});
}

TEST_CASE("loop tiles rotate through min(4, trip count) buffers", "[firmware][allocator]") {
  for (int64_t trip : {1, 2, 3, 4, 9}) {
    const ncore::Program p = run([&](nki::Tracer&) {
      for (int64_t i : nl::affine_range(trip)) {
        (void)i;
        Tensor t = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "t");
        nisa::memset(t, 0.0f);
      }
    });
    const int64_t k = std::min<int64_t>(4, trip);
    std::vector<uint64_t> expect;
    for (int64_t i = 0; i < trip; ++i) expect.push_back(static_cast<uint64_t>((i % k) * 64));  // 4-byte tile, 64-byte slots
    CHECK(memset_offsets(p) == expect);
  }
}

TEST_CASE("ring depth shrinks to what fits, and fails when one buffer does not", "[firmware][allocator]") {
  const uint64_t usable = trn2().sbuf_usable_bytes;
  // A tile of 60000 bytes per partition: 4 buffers (240000) exceed the usable bytes, 3 fit.
  const int64_t f = 15000;
  const uint64_t slot = 60032;  // 60000 rounded up to 64
  REQUIRE(4 * slot > usable);
  REQUIRE(3 * slot <= usable);
  const ncore::Program p = run([&](nki::Tracer&) {
    for (int64_t i : nl::affine_range(6)) {
      (void)i;
      Tensor t = nl::ndarray({128, f}, nl::float32, nl::sbuf, "big");
      nisa::memset(t, 1.0f);
    }
  });
  CHECK(memset_offsets(p) == std::vector<uint64_t>{0, slot, 2 * slot, 0, slot, 2 * slot});

  const std::string e = kernel_error([&](nki::Tracer&) {
    Tensor keep = nl::ndarray({128, 40000}, nl::float32, nl::sbuf, "keep");  // 160000 bytes at top level
    for (int64_t i : nl::affine_range(2)) {
      (void)i;
      Tensor t = nl::ndarray({128, f}, nl::float32, nl::sbuf, "big");
      nisa::memset(t, 1.0f);
    }
    (void)keep;
  });
  CHECK_THAT(e, Catch::Contains("tests/firmware/test_allocator.cpp:"));
  CHECK_THAT(e, Catch::Contains("SBUF allocation failed for tensor `big`: it needs 60032 bytes per partition, but the "
                                "largest free range is 52984 bytes (52984 of the 212984 usable bytes per partition are "
                                "free)"));
}

TEST_CASE("top-level tiles live to the end, loop rings are freed when the loop ends", "[firmware][allocator]") {
  const ncore::Program p = run([&](nki::Tracer&) {
    Tensor a = nl::ndarray({128, 16}, nl::float32, nl::sbuf, "a");  // 64 bytes at 0
    Tensor b = nl::ndarray({128, 32}, nl::float32, nl::sbuf, "b");  // 128 bytes at 64
    nisa::memset(a, 0.0f);
    nisa::memset(b, 0.0f);
    for (int64_t i : nl::affine_range(2)) {
      (void)i;
      Tensor t = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "t");  // ring of 2 at 192
      nisa::memset(t, 0.0f);
    }
    for (int64_t i : nl::affine_range(3)) {
      (void)i;
      Tensor u = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "u");  // the first loop's bytes again
      nisa::memset(u, 0.0f);
    }
    Tensor c = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "c");  // after the loops: 192 again
    nisa::memset(c, 0.0f);
  });
  CHECK(memset_offsets(p) == std::vector<uint64_t>{0, 64, 192, 256, 192, 256, 320, 192});
}

TEST_CASE("nested loops and repeated sites", "[firmware][allocator]") {
  const ncore::Program p = run([&](nki::Tracer&) {
    auto helper = [](nki::Loc loc = nki::Loc::here()) {
      (void)loc;
      Tensor t = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "h");  // one site, two calls per iteration
      nisa::memset(t, 0.0f);
      return t;
    };
    for (int64_t o : nl::affine_range(2)) {
      (void)o;
      for (int64_t i : nl::affine_range(2)) {
        (void)i;
        Tensor x = helper();
        Tensor y = helper();
        nisa::tensor_tensor(x, x, y, nl::add);  // both still alive: distinct buffers
      }
    }
  });
  // Per inner iteration: first call ring at 0 (2 slots), second call ring at 128 (2 slots);
  // the inner loop's rings are freed at its end and re-made at the same place.
  CHECK(memset_offsets(p) == std::vector<uint64_t>{0, 128, 64, 192, 0, 128, 64, 192});
}

TEST_CASE("a site whose tile grows gets a new, larger ring", "[firmware][allocator]") {
  const ncore::Program p = run([&](nki::Tracer&) {
    for (int64_t i : nl::affine_range(3)) {
      Tensor t = nl::ndarray({128, i < 2 ? 1 : 100}, nl::float32, nl::sbuf, "t");
      nisa::memset(t, 0.0f);
    }
  });
  // Ring of 3 x 64 bytes at 0; iteration 2 needs 400 bytes: the ring is replaced by 3 x 448
  // bytes, again at 0, and iteration 2 takes its slot 2.
  CHECK(memset_offsets(p) == std::vector<uint64_t>{0, 64, 2 * 448});
}

TEST_CASE("a tile whose buffer was reused is dead", "[firmware][allocator]") {
  std::string e = kernel_error([&](nki::Tracer&) {
    Tensor first;
    for (int64_t i : nl::affine_range(8)) {
      Tensor t = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "t");
      if (i == 0) first = t;
      nisa::memset(t, 0.0f);
      if (i == 4) nisa::memset(first, 1.0f);
    }
  });
  CHECK_THAT(e, Catch::Contains("uses tile `t`"));
  CHECK_THAT(e, Catch::Contains("its buffer was reused by iteration 4 of the loop at tests/firmware/test_allocator.cpp:"));

  e = kernel_error([&](nki::Tracer&) {
    Tensor keep;
    for (int64_t i : nl::affine_range(2)) {
      (void)i;
      keep = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "t");
    }
    nisa::memset(keep, 0.0f);
  });
  CHECK_THAT(e, Catch::Contains("err_local_variable_used_out_of_scope"));
}

TEST_CASE("mod_alloc places logical tile m in physical tile m mod k", "[firmware][allocator]") {
  kernels::Args a;
  a.kernel = "direct_alloc";
  a.set("n", 6 * 128000);  // 6 logical tiles over 4 physical ones
  const ncore::Program p = kernels::build(a, trn2());
  std::vector<std::array<uint64_t, 3>> got;
  for (const auto& i : p.streams[ncore::Program::stream_index(isa::Engine::dve, 0)].insns)
    if (i.insn.opcode == isa::Opcode::tensor_tensor)
      got.push_back({i.insn.src0.offset, i.insn.src1.offset, i.insn.dst.offset});
  REQUIRE(got.size() == 6);
  for (uint64_t m = 0; m < 6; ++m) {
    const uint64_t slot = (m % 4) * 4000;  // 1000 fp32 per partition
    CHECK(got[m] == std::array<uint64_t, 3>{slot, 16000 + slot, 32000 + slot});
  }
}

TEST_CASE("mod_alloc over partitions and free tiles", "[firmware][allocator]") {
  const ncore::Program p = run([&](nki::Tracer&) {
    Tensor t = nl::ndarray({4, nl::par_dim(32), 10}, nl::float32, ncc::sbuf::mod_alloc(1024, 32, {2}, {2}), "t");
    for (int64_t m : nl::affine_range(4)) nisa::memset(t[m], 0.0f);
  });
  // Tile m: partition 32 + (m % 2) * 32, byte 1024 + (m % 2) * 40.
  CHECK(memset_places(p) == std::vector<std::pair<uint32_t, uint64_t>>{{32, 1024}, {64, 1064}, {32, 1024}, {64, 1064}});
}

TEST_CASE("automatic tiles avoid mod_alloc regions", "[firmware][allocator]") {
  const ncore::Program p = run([&](nki::Tracer&) {
    Tensor d = nl::ndarray({2, nl::par_dim(128), 1000}, nl::float32, ncc::sbuf::mod_alloc(0, 0, {}, {4}), "d");
    Tensor t = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "t");
    nisa::memset(t, 0.0f);
    nisa::memset(d[1], 0.0f);
  });
  // d reserves 4 x 4000 bytes from 0; the first free 64-byte boundary is 16000.
  CHECK(memset_offsets(p) == std::vector<uint64_t>{16000, 4000});

  const std::string e = kernel_error([&](nki::Tracer&) {
    Tensor t = nl::ndarray({128, 1}, nl::float32, nl::sbuf, "t");
    Tensor d = nl::ndarray({2, nl::par_dim(128), 1000}, nl::float32, ncc::sbuf::mod_alloc(0, 0, {}, {4}), "d");
    (void)t;
    (void)d;
  });
  CHECK_THAT(e, Catch::Contains("mod_alloc region [0, 16000) of tensor `d` overlaps the automatically allocated tile `t` "
                                "at [0, 64)"));  // a 4-byte tile takes a 64-byte slot

  // Overlapping explicit regions are allowed (the _bad kernel relies on it).
  kernels::Args a;
  a.kernel = "direct_alloc_bad";
  a.set("n", 256000);
  CHECK_NOTHROW(kernels::build(a, trn2()));

  const std::string big = kernel_error([&](nki::Tracer&) {
    Tensor d = nl::ndarray({2, nl::par_dim(128), 30000}, nl::float32, ncc::sbuf::mod_alloc(0, 0, {}, {2}), "d");
    (void)d;
  });
  CHECK_THAT(big, Catch::Contains("mod_alloc places tensor `d` at bytes [0, 240000) of each partition, beyond the "
                                  "212984 usable bytes per partition"));
}

TEST_CASE("results of API calls are allocated at their call site", "[firmware][allocator]") {
  const ncore::Program p = run([&](nki::Tracer& tr) {
    Tensor x = tr.input("x", {128, 4}, nl::float32);
    for (int64_t i : nl::affine_range(5)) {
      (void)i;
      Tensor t = nl::ndarray({128, 4}, nl::float32, nl::sbuf, "t");  // ring of 4 at 0 (16-byte tiles)
      nisa::dma_copy(t, x);
      Tensor r = nisa::tensor_scalar(t, nl::multiply, 2.0);  // ring of 4 at 256
      nisa::dma_copy(x, r);
    }
  });
  std::vector<uint64_t> dst;
  for (const auto& i : p.streams[ncore::Program::stream_index(isa::Engine::dve, 0)].insns)
    if (i.insn.opcode == isa::Opcode::tensor_scalar) dst.push_back(i.insn.dst.offset);
  CHECK(dst == std::vector<uint64_t>{256, 320, 384, 448, 256});
}
