// The vector-add kernels: instruction counts, queue use, wait values, deadlock freedom and
// hazard ordering under random interleavings, trace time, the registry and its references.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <set>
#include <iostream>

#include "exec_check.hpp"
#include "ncore/error.hpp"
#include "ncore/validate.hpp"
#include "nki/nki.hpp"
#include "kernels/kernel.hpp"
#include "kernels/vector_add.hpp"

namespace {

namespace isa = ncore::isa;
namespace nl = nki::nl;
using nki::Tensor;

const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

kernels::Args args(const std::string& kernel, int64_t n) { return kernels::Args(kernel, {{"n", n}}); }

// Traces a declared kernel recording the issue order.
ncore::Program trace_kernel(const kernels::Args& a, nki::TraceStats* stats) {
  nki::TraceOptions o;
  o.dma_queues_used = a.dma_queues;
  o.record_order = true;
  o.stats = stats;
  return kernels::build(kernels::find(a.kernel), kernels::resolve(a), trn2(), o);
}

std::vector<uint8_t> f32_bytes(std::initializer_list<float> v) {
  std::vector<uint8_t> b(v.size() * 4);
  size_t k = 0;
  for (float f : v) std::memcpy(&b[4 * k++], &f, 4);
  return b;
}

std::vector<uint8_t> u16_bytes(std::initializer_list<uint16_t> v) {
  std::vector<uint8_t> b;
  for (uint16_t h : v) {
    b.push_back(static_cast<uint8_t>(h));
    b.push_back(static_cast<uint8_t>(h >> 8));
  }
  return b;
}

}  // namespace

TEST_CASE("instruction counts of the vector-add kernels", "[firmware][kernels]") {
  struct Case {
    std::string kernel;
    int64_t n, row_chunk, free_dim;
    uint64_t dma, ts, tt;
  };
  // Derived from the handouts: loads a and b and a store per iteration, one add per iteration.
  const std::vector<Case> cases = {
      {"naive", 128, 128, 200, 3, 1, 0},
      {"tiled", 25600, 128, 200, 3 * 200, 200, 0},
      {"tiled", 25600, 64, 200, 3 * 400, 400, 0},
      {"stream", 25600, 128, 200, 3, 0, 1},
      {"stream", 25600, 128, 2, 3 * 100, 0, 100},
      {"stream", 256000, 128, 1000, 3 * 2, 0, 2},
      {"direct_alloc", 256000, 128, 200, 3 * 2, 0, 2},
      {"direct_alloc_bad", 256000, 128, 200, 3 * 2, 0, 2},
  };
  for (const auto& c : cases) {
    kernels::Args a = args(c.kernel, c.n);
    if (a.kernel == "tiled") a.set("row_chunk", c.row_chunk);
    if (a.kernel == "stream") a.set("free_dim", c.free_dim);
    const ncore::Program p = kernels::build(a, trn2());
    INFO(c.kernel << " n=" << c.n);
    CHECK(fwtest::count_opcode(p, isa::Opcode::dma_copy) == c.dma);
    CHECK(fwtest::count_opcode(p, isa::Opcode::tensor_scalar) == c.ts);
    CHECK(fwtest::count_opcode(p, isa::Opcode::tensor_tensor) == c.tt);
    CHECK(p.instruction_count() ==
          c.dma + c.ts + c.tt + fwtest::count_opcode(p, isa::Opcode::sem_wait));
    CHECK(p.streams.size() == 5u + trn2().dma_queues);
    // engine instructions on dve, copies on DMA queues
    for (size_t s = 0; s < p.streams.size(); ++s)
      for (const auto& i : p.streams[s].insns) {
        if (i.insn.opcode == isa::Opcode::dma_copy) CHECK(s >= 5u);
        if (i.insn.opcode == isa::Opcode::tensor_scalar || i.insn.opcode == isa::Opcode::tensor_tensor) CHECK(s == 3u);
        REQUIRE_NOTHROW(ncore::validate_insn(i.insn, trn2(), p.hbm_bytes));
        REQUIRE(i.loc < p.locations.size());
      }
  }
}

TEST_CASE("HBM tensors, locations and output of a traced kernel", "[firmware][kernels]") {
  const ncore::Program p = kernels::build(args("stream", 25600), trn2());
  REQUIRE(p.hbm_tensors.size() == 3);
  CHECK(p.kernel == "vector_add_stream");
  CHECK(p.preset == "trn2");
  const ncore::HbmTensor* a = p.find_tensor("a_vec");
  const ncore::HbmTensor* b = p.find_tensor("b_vec");
  const ncore::HbmTensor* o = p.find_tensor("out");
  REQUIRE((a && b && o));
  CHECK(a->role == ncore::TensorRole::input);
  CHECK(o->role == ncore::TensorRole::output);
  CHECK(o->shape == std::vector<int64_t>{25600});  // reshaped back, as the kernel returns it
  CHECK(a->offset == 0);
  CHECK(b->offset == 102400);
  CHECK(o->offset == 204800);
  CHECK(p.hbm_bytes == 307200);
  for (const auto& t : p.hbm_tensors) CHECK(t.offset % 64 == 0);
  for (const auto& l : p.locations) CHECK(l.file == "kernels/src/vector_add.cpp");
  const ncore::Program d = kernels::build(args("direct_alloc", 128000), trn2());
  CHECK(d.find_tensor("out")->shape == std::vector<int64_t>{128000, 1});
}

TEST_CASE("dma_copy goes round-robin over the queues in use", "[firmware][kernels]") {
  for (unsigned q : {1u, 2u, 4u, 16u}) {
    kernels::Args a = args("tiled", 128 * 32);
    a.dma_queues = q;
    const ncore::Program p = kernels::build(a, trn2());
    // 96 copies over q queues
    for (unsigned k = 0; k < trn2().dma_queues; ++k) {
      const auto& s = p.streams[5 + k];
      const uint64_t copies = std::count_if(s.insns.begin(), s.insns.end(), [](const ncore::Instruction& i) {
        return i.insn.opcode == isa::Opcode::dma_copy;
      });
      CHECK(copies == (k < q ? 96 / q + (k < 96 % q ? 1 : 0) : 0));
      for (const auto& i : s.insns) CHECK(i.insn.dma_queue == k);
    }
  }
}

TEST_CASE("waits on DMA semaphores are multiples of 16, updates follow the convention", "[firmware][kernels]") {
  for (const std::string k : {"tiled", "stream", "direct_alloc", "direct_alloc_bad"}) {
    kernels::Args a = args(k, k == "tiled" ? 2048 : 256000);
    if (k == "stream") a.set("free_dim", 250);
    const ncore::Program p = kernels::build(a, trn2());
    size_t waits = 0;
    for (size_t s = 0; s < p.streams.size(); ++s)
      for (const auto& i : p.streams[s].insns) {
        if (i.insn.wait_cond != isa::SemCond::none) {
          ++waits;
          CHECK(i.insn.wait_cond == isa::SemCond::ge);
          CHECK(i.insn.wait_sem < p.streams.size());
          if (i.insn.wait_sem >= 5) CHECK(i.insn.wait_val % 16 == 0);
          CHECK(i.insn.wait_val > 0);
        }
        if (i.insn.opcode == isa::Opcode::sem_wait) {
          CHECK(i.insn.upd_op == isa::SemOp::none);
          CHECK(i.insn.wait_cond != isa::SemCond::none);
        } else {
          CHECK(i.insn.upd_op == isa::SemOp::inc);
          CHECK(i.insn.upd_sem == s);
          CHECK(i.insn.upd_when == isa::SemWhen::complete);
        }
      }
    CHECK(waits > 0);
  }
}

TEST_CASE("every kernel runs to completion with every conflict ordered", "[firmware][kernels]") {
  struct Case {
    std::string kernel;
    int64_t n, row_chunk, free_dim;
  };
  const std::vector<Case> cases = {
      {"naive", 128, 128, 200},         {"naive", 7, 128, 200},       {"tiled", 2048, 128, 200},
      {"tiled", 96, 1, 200},            {"tiled", 1024, 32, 200},     {"stream", 25600, 128, 20},
      {"stream", 12800, 128, 2},        {"direct_alloc", 640000, 1, 1}, {"direct_alloc_bad", 640000, 1, 1},
  };
  for (const auto& c : cases) {
    kernels::Args a = args(c.kernel, c.n);
    if (a.kernel == "tiled") a.set("row_chunk", c.row_chunk);
    if (a.kernel == "stream") a.set("free_dim", c.free_dim);
    nki::TraceStats st;
    const ncore::Program p = trace_kernel(a, &st);
    REQUIRE(st.order.size() == p.instruction_count() - fwtest::count_opcode(p, isa::Opcode::sem_wait));
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const fwtest::Execution e = fwtest::execute(p, trn2(), seed);
      INFO(c.kernel << " n=" << c.n << " seed " << seed << ": " << e.error);
      REQUIRE(e.completed);
      const auto bad = fwtest::check_hazards(p, e, st.order);
      CHECK(bad.empty());
      if (!bad.empty()) FAIL_CHECK(bad.front());
    }
  }
}

TEST_CASE("the stream kernel's column stores do not wait on each other", "[firmware][kernels]") {
  // With FREE_DIM = 2 the 100 stores write interleaved columns of one (128, 200) matrix; none
  // touches another, so a store waits only for its own add.
  const ncore::Program p = kernels::build([] {
    kernels::Args a = args("stream", 25600);
    a.set("free_dim", 2);
    return a;
  }(), trn2());
  size_t stores = 0;
  for (size_t s = 5; s < p.streams.size(); ++s)
    for (const auto& i : p.streams[s].insns)
      if (i.insn.opcode == isa::Opcode::dma_copy && i.insn.dst.mem == isa::Buffer::hbm) {
        ++stores;
        CHECK(i.insn.wait_sem == 3u);  // the vector engine
      }
  CHECK(stores == 100);
}

TEST_CASE("trace time of the tiled kernel at n=25600, ROW_CHUNK=1", "[firmware][kernels][timing]") {
  kernels::Args a = args("tiled", 25600);
  a.set("row_chunk", 1);
  const auto t0 = std::chrono::steady_clock::now();
  const ncore::Program p = kernels::build(a, trn2());
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(fwtest::count_opcode(p, isa::Opcode::dma_copy) == 3u * 25600);
  CHECK(fwtest::count_opcode(p, isa::Opcode::tensor_scalar) == 25600u);
  std::cout << "[firmware] trace of vector_add_tiled n=25600 ROW_CHUNK=1: " << p.instruction_count()
            << " instructions in " << sec << " s\n";
  WARN("trace time " << sec << " s for " << p.instruction_count() << " instructions");
}

TEST_CASE("the tiny preset traces with its own partition count and DMA engines", "[firmware][kernels]") {
  const ncore::Preset& tiny = *ncore::find_preset("tiny");
  kernels::Args a = args("tiled", 64);
  a.set("row_chunk", 16);
  const ncore::Program p = kernels::build(a, tiny);
  CHECK(p.streams.size() == 5u + tiny.dma_queues);
  for (const auto& s : p.streams)
    for (const auto& i : s.insns)
      if (i.insn.wait_cond != isa::SemCond::none && i.insn.wait_sem >= 5) CHECK(i.insn.wait_val % tiny.dma_engines == 0);
  const fwtest::Execution e = fwtest::execute(p, tiny, 3);
  CHECK(e.completed);
  a.set("row_chunk", 32);
  CHECK_THROWS_WITH(kernels::build(a, tiny), Catch::Contains("number of partitions 32 exceed architecture limitation of 16."));
}

TEST_CASE("registry: list, inputs, output", "[firmware][kernels][registry]") {
  std::vector<std::string> names;
  for (const kernels::Kernel* k : kernels::all()) {
    names.push_back(k->name);
    CHECK_FALSE(k->doc.empty());
  }
  // The kernels of kernels/CMakeLists.txt in its order (a new kernel adds itself at the end).
  const std::vector<std::string> first{"naive",     "tiled",  "stream",         "direct_alloc", "direct_alloc_bad",
                                       "transpose", "matmul", "matmul_blocked", "conv"};
  REQUIRE(names.size() >= first.size());
  CHECK(std::vector<std::string>(names.begin(), names.begin() + static_cast<long>(first.size())) == first);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  kernels::Args a = args("stream", 25600);
  a.dtype = isa::Dtype::bf16;
  const auto in = kernels::input_specs(a);
  REQUIRE(in.size() == 2);
  CHECK(in[0].name == "a_vec");
  CHECK(in[1].name == "b_vec");
  CHECK(in[0].shape == std::vector<int64_t>{25600});
  CHECK(in[0].dtype == isa::Dtype::bf16);
  CHECK(in[0].bytes() == 51200u);
  CHECK(kernels::output_specs(a).at(0).shape == std::vector<int64_t>{25600});
  CHECK(kernels::output_specs(args("direct_alloc", 128000)).at(0).shape == std::vector<int64_t>{128000, 1});
  // The traced Program agrees with the specs.
  const ncore::Program p = kernels::build(a, trn2());
  CHECK(p.find_tensor("a_vec")->bytes == 51200u);
  CHECK(p.find_tensor("out")->dtype == isa::Dtype::bf16);
}

TEST_CASE("registry: references round once to the dtype", "[firmware][kernels][registry]") {
  kernels::Args a = args("tiled", 3);
  // fp32: 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even -> 1.
  CHECK(kernels::reference(a, {{"a_vec", f32_bytes({1.0f, 1.5f, -2.0f})}, {"b_vec", f32_bytes({0x1p-24f, 2.25f, 2.0f})}}).at("out") ==
        f32_bytes({1.0f, 3.75f, 0.0f}));
  // bf16 (1 8 7): 1 + 2^-8 ties to 1.0 (0x3f80); (1 + 2^-7) + 2^-8 ties to 1 + 2^-6 (0x3f82);
  // 1 + 2^-9 rounds down to 1.0.
  a.dtype = isa::Dtype::bf16;
  CHECK(kernels::reference(a, {{"a_vec", u16_bytes({0x3f80, 0x3f81, 0x3f80})}, {"b_vec", u16_bytes({0x3b80, 0x3b80, 0x3b00})}}).at("out") ==
        u16_bytes({0x3f80, 0x3f82, 0x3f80}));
  // fp16: 2048 + 1 ties between 2048 and 2050: even -> 2048 (0x6800); 1 + 2^-11 ties to 1 (0x3c00);
  // 0.5 + 0.25 = 0.75 (0x3a00).
  a.dtype = isa::Dtype::fp16;
  CHECK(kernels::reference(a, {{"a_vec", u16_bytes({0x6800, 0x3c00, 0x3800})}, {"b_vec", u16_bytes({0x3c00, 0x1000, 0x3400})}}).at("out") ==
        u16_bytes({0x6800, 0x3c00, 0x3a00}));
  CHECK_THROWS_AS(kernels::reference(a, {{"a_vec", u16_bytes({1, 2, 3})}}), ncore::InputError);
  CHECK_THROWS_WITH(kernels::reference(a, {{"a_vec", u16_bytes({1, 2})}, {"b_vec", u16_bytes({1, 2, 3})}}),
                    Catch::Contains("input 'a_vec' has 4 bytes, expected 6"));
}
