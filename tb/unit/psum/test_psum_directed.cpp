// PSUM unit bench, directed tests (psum_bench.hpp): accumulate on hand-computed special cases,
// three accumulates in a row to one word, the tensor engine's priority, lower port wins, a read
// and a write of one word in one cycle, byte enables and 2-byte elements.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include "Vncore_psum_tiny.h"
#include "Vncore_psum_tiny___024root.h"
#include "Vncore_psum_trn2.h"
#include "Vncore_psum_trn2___024root.h"
#include "bench_dut.hpp"
#include "psum_bench.hpp"

using namespace psum_tb;

namespace {

// One cycle of a directed test, with the bench's message when a check fails.
#define STEP(bench)                         \
  do {                                      \
    const bool step_ok_ = (bench).cycle();  \
    INFO((bench).error());                  \
    REQUIRE(step_ok_);                      \
  } while (0)

// The end of a directed test: the tensor engine stops, every pending request must be granted
// and the storage must equal the reference.
#define DRAIN(bench)                        \
  do {                                      \
    (bench).pe_idle();                      \
    const bool drain_ok_ = (bench).drain(); \
    INFO((bench).error());                  \
    REQUIRE(drain_ok_);                     \
  } while (0)

// Requests for the directed tests (tiny build); a write carries the same data on every lane.
RdReq read_req(uint32_t addr, uint64_t mask) { return RdReq{true, addr, Lanes(mask), 0}; }
WrReq write_req(uint32_t addr, uint64_t mask, uint8_t ben, uint32_t data) {
  WrReq w;
  w.on = true;
  w.addr = addr;
  w.mask = Lanes(mask);
  w.ben = ben;
  w.data.assign(tiny_geo().P, data);
  return w;
}

}  // namespace

TEST_CASE("PSUM accumulate: hand-computed special cases", "[psum]") {
  REQUIRE(num::host_float_is_ieee());
  Bench<Vncore_psum_tiny> b(tiny_geo(), 3);
  struct Case {
    uint32_t old, add, sum;
    const char* what;
  };
  // Binary32, round to nearest even, subnormals kept, any NaN result 0x7FC00000 (numerics.hpp).
  const Case cases[] = {
      {0x7F800000, 0xFF800000, 0x7FC00000, "+inf + -inf"},
      {0xFF800000, 0x40A00000, 0xFF800000, "-inf + 5"},
      {0x7F800000, 0x7FC00000, 0x7FC00000, "+inf + NaN"},
      {0x7F800001, 0x3F800000, 0x7FC00000, "signalling NaN + 1"},
      {0x3F800000, 0xFFC00001, 0x7FC00000, "1 + negative NaN with payload"},
      {0x80000000, 0x80000000, 0x80000000, "-0 + -0"},
      {0x00000000, 0x80000000, 0x00000000, "+0 + -0"},
      {0x80000000, 0x00000000, 0x00000000, "-0 + +0"},
      {0x3FC00000, 0x80000000, 0x3FC00000, "1.5 + -0"},
      {0x3F800000, 0xBF800000, 0x00000000, "1 + -1"},
      {0x80000001, 0x00000001, 0x00000000, "-min subnormal + min subnormal"},
      {0x00000001, 0x00000001, 0x00000002, "min subnormal + min subnormal"},
      {0x007FFFFF, 0x00000001, 0x00800000, "max subnormal + min subnormal: the smallest normal"},
      {0x00800000, 0x80000001, 0x007FFFFF, "smallest normal - min subnormal: max subnormal"},
      {0x80400000, 0x80400000, 0x80800000, "two negative subnormals to a normal"},
      {0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000, "max + max overflows"},
      {0x7F7FFFFF, 0x73000000, 0x7F800000, "max + half an ulp: tie to even rounds up to inf"},
      {0x7F7FFFFF, 0x72FFFFFF, 0x7F7FFFFF, "max + just under half an ulp"},
      {0x3F800000, 0x33800000, 0x3F800000, "1 + 2^-24: tie, stays even"},
      {0x3F800001, 0x33800000, 0x3F800002, "(1 + 2^-23) + 2^-24: tie, up to even"},
      {0x3F800000, 0x34400000, 0x3F800002, "1 + 3 * 2^-24"},
      {0x3F800000, 0x33800001, 0x3F800001, "1 + just over half an ulp"},
      {0x3F800001, 0xBF800000, 0x34000000, "(1 + 2^-23) - 1: exact cancellation"},
      {0x4B7FFFFF, 0x3F800000, 0x4B800000, "(2^24 - 1) + 1: carry into the exponent"},
      {0x4B800000, 0xBF800000, 0x4B7FFFFF, "2^24 - 1: borrow out of the exponent"},
      {0x4B800001, 0x3F800000, 0x4B800002, "(2^24 + 2) + 1: tie, up to even"},
      {0x4B800000, 0x3F800000, 0x4B800000, "2^24 + 1: tie, stays even"},
      {0xC0000000, 0x00000001, 0xC0000000, "-2 + min subnormal: below the last bit"},
      {0x00000000, 0x7FC00001, 0x7FC00000, "+0 + quiet NaN with payload"},
      {0x00400000, 0x80400000, 0x00000000, "subnormal - itself"},
      {0x0DA24260, 0x80000001, 0x0DA24260, "normal + negative min subnormal"},
      {0x01000000, 0x80800001, 0x007FFFFF, "2^-125 - (2^-126 + 2^-149): exact, subnormal"},
  };
  const unsigned P = tiny_geo().P;
  const unsigned n = sizeof cases / sizeof cases[0];
  for (unsigned k = 0; k < n; ++k)
    CHECK(ref_add(cases[k].old, cases[k].add) == cases[k].sum);  // the bench's reference agrees
  // P cases at a time, one per partition, at word 5 + k of bank 1: overwrite then accumulate.
  for (unsigned k0 = 0; k0 < n; k0 += P) {
    b.pe_idle();
    for (unsigned k = k0; k < std::min(n, k0 + P); ++k) b.pe(k - k0) = PeLane{true, 64 + 5 + k, cases[k].old, false};
    STEP(b);
    for (unsigned k = k0; k < std::min(n, k0 + P); ++k) {
      INFO(cases[k].what);
      CHECK(b.mem(k - k0, 64 + 5 + k) == cases[k].old);  // an overwrite keeps the bits, NaN payloads too
      b.pe(k - k0) = PeLane{true, 64 + 5 + k, cases[k].add, true};
    }
    STEP(b);
    for (unsigned k = k0; k < std::min(n, k0 + P); ++k) {
      INFO(cases[k].what << ": " << hex(cases[k].old) << " + " << hex(cases[k].add));
      CHECK(b.mem(k - k0, 64 + 5 + k) == cases[k].sum);
    }
  }
  DRAIN(b);
}

TEST_CASE("PSUM accumulate: read, add and write in the cycle, so a word can be accumulated every cycle", "[psum]") {
  Bench<Vncore_psum_tiny> b(tiny_geo(), 4);
  // lane 0: 1 + 2^-24 + 2^-24 + 2^-24, rounded after each add: each is a tie that stays at 1
  // (one rounding at the end would give 1 + 2^-22);
  // lane 1: (1 + 2^-23) + 2^-24 goes up to 1 + 2^-22, and the next two ties stay there;
  // lane 2: 2^127 + 2^127 = inf, then + (-max) stays inf, then + -inf is NaN.
  const uint32_t first[3] = {0x3F800000, 0x3F800001, 0x7F000000};
  const uint32_t adds[3][3] = {{0x33800000, 0x33800000, 0x33800000},
                               {0x33800000, 0x33800000, 0x33800000},
                               {0x7F000000, 0xFF7FFFFF, 0xFF800000}};
  const uint32_t after[3][3] = {{0x3F800000, 0x3F800000, 0x3F800000},
                                {0x3F800002, 0x3F800002, 0x3F800002},
                                {0x7F800000, 0x7F800000, 0x7FC00000}};
  for (unsigned p = 0; p < 3; ++p) b.pe(p) = PeLane{true, 200, first[p], false};
  STEP(b);
  for (unsigned c = 0; c < 3; ++c) {
    for (unsigned p = 0; p < 3; ++p) b.pe(p) = PeLane{true, 200, adds[p][c], true};
    STEP(b);
    for (unsigned p = 0; p < 3; ++p) {
      INFO("lane " << p << ", accumulate " << c);
      CHECK(b.mem(p, 200) == after[p][c]);
    }
  }
  DRAIN(b);
}

TEST_CASE("PSUM tensor engine has priority: refused engine accesses wait and have no effect", "[psum]") {
  Bench<Vncore_psum_tiny> b(tiny_geo(), 5);
  // The tensor engine accumulates into word 70 (bank 1) of partitions 4 and 5 for 3 cycles.
  // Read port 0 (word 100, bank 1, lanes 5-6) and write port 0 (word 127, bank 1, lane 4) need
  // those (bank, partition) pairs: refused, although they are the lowest ports. Read port 1 (bank
  // 1, lanes 0-3) and write port 1 (bank 1, lane 6) do not: granted, every cycle.
  const uint32_t before_w = b.mem(4, 127);
  for (unsigned c = 0; c < 3; ++c) {
    b.pe(4) = PeLane{true, 70, 0x3F800000, true};
    b.pe(5) = PeLane{true, 70, 0x3F800000, true};
    b.er(0) = read_req(100 * 4, 0x60);
    b.er(1) = read_req(90 * 4 + 2, 0x0F);
    b.ew(0) = write_req(127 * 4, 0x10, 0xF, 0xDEADBEEF);
    b.ew(1) = write_req(64 * 4, 0x40, 0xF, 0x12345678);
    STEP(b);
    INFO("cycle " << c);
    CHECK(b.last_read_grants() == 0b010);
    CHECK(b.last_write_grants() == 0b10);
    CHECK(b.mem(4, 127) == before_w);  // the refused write did nothing
    CHECK(b.mem(6, 64) == 0x12345678u);
  }
  // The tensor engine moves to bank 2 on partition 4 only: write port 0 (lane 4, bank 1) and
  // read port 0 (lanes 5-6) go through at once.
  b.pe_idle();
  b.pe(4) = PeLane{true, 130, 0x40000000, false};
  STEP(b);
  CHECK(b.last_read_grants() == 0b001);  // read port 1 was granted before and asked no more
  CHECK(b.last_write_grants() == 0b01);
  CHECK(b.mem(4, 127) == 0xDEADBEEFu);
  CHECK(b.rdata(0, 5) == b.mem(5, 100));
  // A read of the very word the tensor engine writes, on its lane, is refused too (the engine
  // holds the bank's read port): a PE write and an engine read never meet on one word.
  b.pe_idle();
  b.pe(7) = PeLane{true, 10, 0x3F800000, false};
  b.er(0) = read_req(10 * 4, 0x80);
  b.er(2) = read_req(10 * 4, 0x100);  // the same word on partition 8: granted
  STEP(b);
  CHECK(b.last_read_grants() == 0b100);
  DRAIN(b);
}

TEST_CASE("PSUM among engine ports the lower port number wins", "[psum]") {
  Bench<Vncore_psum_tiny> b(tiny_geo(), 6);
  for (unsigned c = 0; c < 4; ++c) {
    // reads on bank 3: port 0 lanes 0-1, port 1 lanes 1-2 (conflicts with 0), port 2 lanes 2-3
    // (conflicts only with port 1, which is refused, so it is granted); writes on bank 0: port 0
    // lanes 8-9, port 1 lane 9
    b.er(0) = read_req(192 * 4, 0x3);
    b.er(1) = read_req(250 * 4, 0x6);
    b.er(2) = read_req(200 * 4 + 2, 0xC);
    b.ew(0) = write_req(3 * 4, 0x300, 0xF, c);
    b.ew(1) = write_req(4 * 4, 0x200, 0xF, c);
    STEP(b);
    CHECK(b.last_read_grants() == 0b101);
    CHECK(b.last_write_grants() == 0b01);
  }
  // left alone, the refused ports go next
  STEP(b);
  CHECK(b.last_read_grants() == 0b010);
  CHECK(b.last_write_grants() == 0b10);
  CHECK(b.mem(9, 4) == 3u);  // write port 1's data as last presented (c = 3)
  DRAIN(b);
}

TEST_CASE("PSUM a read and a write of the same word in one cycle read the old word", "[psum]") {
  Bench<Vncore_psum_tiny> b(tiny_geo(), 7);
  const uint32_t old = b.mem(3, 33);
  b.ew(1) = write_req(33 * 4, 0xFFFF, 0xF, 0xCAFEF00D);
  b.er(2) = read_req(33 * 4, 0x0008);
  STEP(b);
  CHECK(b.last_read_grants() == 0b100);
  CHECK(b.last_write_grants() == 0b10);
  CHECK(b.rdata(2, 3) == old);
  CHECK(b.mem(3, 33) == 0xCAFEF00Du);
  b.er(2) = read_req(33 * 4 + 2, 0x0008);
  STEP(b);
  CHECK(b.rdata(2, 3) == 0xCAFEF00Du);
  DRAIN(b);
}

TEST_CASE("PSUM byte enables and 2-byte engine elements at bytes 0 and 2", "[psum]") {
  Bench<Vncore_psum_tiny> b(tiny_geo(), 8);
  auto write = [&](uint32_t addr, uint64_t mask, uint8_t ben, uint32_t data) {
    b.ew(0) = write_req(addr, mask, ben, data);
    STEP(b);
    REQUIRE(b.last_write_grants() == 0b01);
  };
  const unsigned w = 150;
  for (const ElementWrite& e : kElementWrites) write(4 * w + e.byte, e.mask, e.ben, e.data);
  CHECK(b.mem(4, w) == kElementWordsAfter[0]);
  CHECK(b.mem(5, w) == kElementWordsAfter[1]);
  // read back at byte 2 (the word holding the element)
  b.er(1) = read_req(4 * w + 2, 0x0030);
  STEP(b);
  CHECK(b.rdata(1, 4) == kElementWordsAfter[0]);
  CHECK(b.rdata(1, 5) == kElementWordsAfter[1]);
  // the tensor engine accumulates onto what the engine wrote: 0x3F800000 + 0x3F800000 = 2
  write(4 * w + 2, 0x0001, 0x3, 0x00003F80u);
  write(4 * w, 0x0001, 0x3, 0x00000000u);
  b.pe(0) = PeLane{true, w, 0x3F800000u, true};
  STEP(b);
  CHECK(b.mem(0, w) == 0x40000000u);
  DRAIN(b);
}
