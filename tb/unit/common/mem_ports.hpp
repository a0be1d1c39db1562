// The memories' engine ports as the SBUF and PSUM benches see them, written once: the element an
// engine write carries, drawn at random, and how a granted engine write lands in a reference
// memory's 32-bit word.
//
// An engine write puts one element per lane at a byte address: a 2-byte element at byte 0 or 2
// of its word, or a 4-byte one at byte 0, in the low bits of the lane's data, with byte enables
// relative to the element; data bits above the enabled bytes are junk and must not land.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>

#include "bench_dut.hpp"

namespace ncore::tb {

// Whether a port's request (its fields `on` and `wait`) starts in this cycle: the port is free and
// a uniform draw falls below p_req. A started request is pending and has not waited yet.
template <class Req>
bool request_starts(Req& q, std::mt19937_64& rng, double p_req) {
  if (q.on || std::uniform_real_distribution<double>(0.0, 1.0)(rng) >= p_req) return false;
  q.on = true;
  q.wait = 0;
  return true;
}

// Whether any port of these arrays has a request pending (its field `on`).
template <class... Ports>
bool any_request_on(const Ports&... ports) {
  return (std::any_of(std::begin(ports), std::end(ports), [](const auto& q) { return q.on; }) || ...);
}

// The kinds of element engine_write_element draws.
enum class WriteKind { half, word, any_bytes };

// A random engine write into `word`: a 2-byte element at byte 0 or 2 (usually both bytes
// enabled, sometimes one), a 4-byte element, or a 4-byte word with any byte enables. Sets the
// byte address and the byte enables; says which kind it drew.
inline WriteKind engine_write_element(std::mt19937_64& rng, uint32_t word, uint32_t& addr, uint8_t& ben) {
  switch (rng() % 4) {
    case 0:
    case 1:
      addr = word * 4 + static_cast<uint32_t>(rng() % 2) * 2;
      ben = (rng() % 4 == 0) ? static_cast<uint8_t>(1 + rng() % 3) : 0x3;
      return WriteKind::half;
    case 2:
      addr = word * 4;
      ben = 0xF;
      return WriteKind::word;
    default:
      addr = word * 4;
      ben = static_cast<uint8_t>(rng() % 16);
      return WriteKind::any_bytes;
  }
}

// A granted engine write of `data` (the element in its low bits) at byte `addr` with byte
// enables `ben`, into the word that holds it.
inline void merge_element(uint32_t& word, uint32_t addr, uint8_t ben, uint32_t data) {
  const unsigned sh = addr % 4;
  for (unsigned j = sh; j < 4; ++j)
    if ((ben >> (j - sh)) & 1) set_byte(word, j, static_cast<uint8_t>(data >> (8 * (j - sh))));
}

// The byte-enable test both memory benches run (directed): engine writes to one word of
// partitions 4 and 5 (mask bits 4 and 5), then the words they leave there.
struct ElementWrite {
  uint32_t byte;  // within the word
  uint16_t mask;
  uint8_t ben;
  uint32_t data;
};
inline constexpr ElementWrite kElementWrites[] = {
    {0, 0x0030, 0xF, 0x11223344u},  // partitions 4, 5: whole word
    {2, 0x0010, 0x3, 0xDEADAAAAu},  // partition 4: element at byte 2, junk above
    {0, 0x0010, 0x3, 0xBEEFBBBBu},  // partition 4: element at byte 0
    {0, 0x0020, 0x4, 0x00CC0000u},  // partition 5: byte 2 alone
    {2, 0x0020, 0x2, 0x0000DD00u},  // partition 5: byte 1 of an element at byte 2
};
inline constexpr uint32_t kElementWordsAfter[2] = {0xAAAABBBBu, 0xDDCC3344u};  // partitions 4, 5

}  // namespace ncore::tb
