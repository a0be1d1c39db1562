// The memories' ports as the benches see them, written once: the element an engine write
// carries, drawn at random, and how a granted engine write lands in a reference memory's 32-bit
// word; and the fields of ncore_mem_pkg's port structs on a Verilated port.
//
// An engine write puts one element per lane at a byte address: a 2-byte element at byte 0 or 2
// of its word, or a 4-byte one at byte 0, in the low bits of the lane's data, with byte enables
// relative to the element; data bits above the enabled bytes are junk and must not land.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>

#include "bench_bits.hpp"
#include "bench_dut.hpp"

namespace ncore::tb {

// ---- ncore_mem_pkg's port structs (rtl/ncore_mem_pkg.sv) on a Verilated port --------------------
// A packed struct is one bit vector on the model's port, its first member in the high bits, its
// last from bit 0. Its widths are the model's NCORE_MEM_LANES and NCORE_MEM_ADDR_W, which the
// build sets to the preset's partitions and $clog2(SbufBytes) (tiny: 16 and 12; trn2 and trn1 the
// package's 128 and 18): MemWidths{partitions, address bits}.
struct MemWidths {
  static constexpr unsigned kLineBytes = 16;  // MemLineBytes
  static constexpr unsigned kLineBits = 8 * kLineBytes;
  static constexpr unsigned kHbmLineW = 36;   // HbmLineW
  static constexpr unsigned kPsumWordW = 12;  // PsumWordW
  unsigned lanes, addr_w;
  unsigned part_w() const {  // MemPartW
    unsigned n = 0;
    while ((1u << n) < lanes) ++n;
    return n > 0 ? n : 1;
  }
  unsigned line_w() const { return addr_w - 4; }  // MemLineW
};

// line_rd_req_t {req, part, line} and line_wr_req_t {req, part, line, ben, data}: a line of a
// partition; line_rd_rsp_t {gnt, data} and line_wr_rsp_t {gnt}.
template <class T>
void put_line_req(T& port, const MemWidths& w, unsigned lsb, bool req, uint32_t part, uint32_t line) {
  put_bits(port, lsb, w.line_w(), line);
  put_bits(port, lsb + w.line_w(), w.part_w(), part);
  put_bits(port, lsb + w.line_w() + w.part_w(), 1, req);
}
template <class T>
void put_line_rd_req(T& port, const MemWidths& w, bool req, uint32_t part, uint32_t line) {
  put_line_req(port, w, 0, req, part, line);
}
template <class T, class Words>
void put_line_wr_req(T& port, const MemWidths& w, bool req, uint32_t part, uint32_t line, uint16_t ben,
                     const Words& data) {
  for (unsigned k = 0; k < MemWidths::kLineBytes / 4; ++k) put_bits(port, 32 * k, 32, data[k]);
  put_bits(port, MemWidths::kLineBits, MemWidths::kLineBytes, ben);
  put_line_req(port, w, MemWidths::kLineBits + MemWidths::kLineBytes, req, part, line);
}
template <class T>
uint32_t line_req_part(const T& port, const MemWidths& w, bool write) {
  return uint32_t(get_bits(port, (write ? MemWidths::kLineBits + MemWidths::kLineBytes : 0) + w.line_w(), w.part_w()));
}
template <class T>
bool line_rd_gnt(const T& port) { return get_bits(port, MemWidths::kLineBits, 1); }
template <class T>
uint32_t line_rd_word(const T& port, unsigned k) { return uint32_t(get_bits(port, 32 * k, 32)); }

// lane_wr_req_t {valid, acc, addr, data}: per lane, a PSUM word address and the word.
template <class T>
void put_lane_wr(T& port, const MemWidths& w, unsigned lane, bool valid, bool acc, uint32_t word, uint32_t data) {
  const unsigned data_lsb = 0, addr_lsb = 32 * w.lanes, acc_lsb = addr_lsb + MemWidths::kPsumWordW * w.lanes;
  put_bits(port, data_lsb + 32 * lane, 32, data);
  put_bits(port, addr_lsb + MemWidths::kPsumWordW * lane, MemWidths::kPsumWordW, word);
  put_bits(port, acc_lsb + lane, 1, acc);
  put_bits(port, acc_lsb + w.lanes + lane, 1, valid);
}

// hbm_req_t {valid, we, line, ben, data} and hbm_rsp_t {credit, rvalid, rdata, ack}: fixed widths.
struct HbmReq {
  bool valid, we;
  uint64_t line;
  uint16_t ben;
};
template <class T>
HbmReq hbm_req(const T& port) {
  constexpr unsigned kBen = MemWidths::kLineBits, kLine = kBen + MemWidths::kLineBytes;
  constexpr unsigned kWe = kLine + MemWidths::kHbmLineW;
  return {get_bits(port, kWe + 1, 1) != 0, get_bits(port, kWe, 1) != 0, get_bits(port, kLine, MemWidths::kHbmLineW),
          uint16_t(get_bits(port, kBen, MemWidths::kLineBytes))};
}
template <class T>
uint8_t hbm_req_byte(const T& port, unsigned b) { return uint8_t(get_bits(port, 8 * b, 8)); }
template <class T>
void put_hbm_rsp(T& port, bool credit, bool rvalid, bool ack) {
  constexpr unsigned kRvalid = 1 + MemWidths::kLineBits;
  put_bits(port, 0, 1, ack);
  put_bits(port, kRvalid, 1, rvalid);
  put_bits(port, kRvalid + 1, 1, credit);
}
template <class T>
void put_hbm_rdata(T& port, unsigned k, uint32_t word) { put_bits(port, 1 + 32 * k, 32, word); }

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
