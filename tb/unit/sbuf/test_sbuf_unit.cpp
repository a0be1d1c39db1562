// SBUF unit bench: rtl/ncore_sbuf.sv (tiny preset: 16 partitions x 4 KiB, 4 banks of 16-byte
// lines, 2 DMA ports per side) through the wrapper ncore_sbuf_tb, with one and with two engine
// ports per side.
//
// Random traffic drives every port at once; a port holds its request until it is granted, as the
// engines do. Phases aim the traffic at one bank and one partition on purpose. Every cycle the
// bench checks, before the clock edge:
//   - no grant without a request;
//   - no two grants that the documented rules forbid: on one side (reads, or writes) two grants
//     touching the same bank of the same partition, or two DMA ports on one partition;
//   - no refusal without a reason: every refused request conflicts with a granted one;
//   - the grants are exactly those of the documented arbitration: per bank the side with
//     priority first, lower port number first within a side, and the bank's priority flips after
//     every cycle with a conflict on it (a C++ model of that rule, kept beside the RTL);
//   - a refused request is granted within a bounded number of retries (port 0 of each side
//     within one: the flip guarantees it);
// and after the edge:
//   - the read data of every granted read, from the reference memory as it was before the
//     edge (a read and a write of the same word in one cycle returns the old word), and that
//     the data of every port holds until its next granted read (lanes outside the mask too);
//   - the storage equals the reference memory, which applies exactly the granted writes with
//     their byte enables (every 256 cycles and at the end).
// Directed tests check the priority flip cycle by cycle and byte enables / 2-byte engine
// elements at bytes 0 and 2 of a word against hand-computed values.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_bits.hpp"
#include "Vncore_sbuf_tb1.h"
#include "Vncore_sbuf_tb1___024root.h"
#include "Vncore_sbuf_tb2.h"
#include "Vncore_sbuf_tb2___024root.h"
#include "ncore/presets_gen.hpp"
#include "verilated.h"

namespace {

// The tiny preset, from the generated C++ header (the RTL takes the same numbers from
// ncore_cfg_pkg::CfgTiny).
const ncore::Preset& tiny() { return *ncore::find_preset("tiny"); }
const unsigned kP = static_cast<unsigned>(tiny().num_partitions);
const unsigned kBytes = static_cast<unsigned>(tiny().sbuf_bytes);
const unsigned kWords = kBytes / 4;
const unsigned kBanks = static_cast<unsigned>(tiny().sbuf_banks);
const unsigned kLineB = static_cast<unsigned>(tiny().sbuf_line_bytes);
const unsigned kLineWords = kLineB / 4;
const unsigned kLines = kBytes / kLineB;
const unsigned kDma = static_cast<unsigned>(tiny().dma_engines);
constexpr unsigned kMaxP = 16;      // port widths of the Verilated wrapper (tiny preset)
constexpr unsigned kAddrW = 12;     // $clog2(SbufBytes)
constexpr unsigned kLineAddrW = 8;  // AddrW - $clog2(SbufLineBytes)
constexpr unsigned kPartW = 4;      // $clog2(NumPartitions)

using namespace ncore::tb;

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// ---- requests ----------------------------------------------------------------------------
struct EngRd {
  bool on = false;
  uint32_t addr = 0;
  uint16_t mask = 0;
  uint64_t wait = 0;  // cycles refused so far
};
struct EngWr {
  bool on = false;
  uint32_t addr = 0;
  uint16_t mask = 0;
  uint8_t ben = 0;
  std::array<uint32_t, kMaxP> data{};
  uint64_t wait = 0;
};
struct DmaRd {
  bool on = false;
  uint32_t part = 0, line = 0;
  uint64_t wait = 0;
};
struct DmaWr {
  bool on = false;
  uint32_t part = 0, line = 0;
  uint16_t ben = 0;
  std::array<uint32_t, 4> data{};
  uint64_t wait = 0;
};

// One access as the arbitration sees it: a bank and the partitions it touches there.
struct Access {
  bool dma;
  unsigned bank;
  uint32_t parts;
};

inline unsigned bank_of_line(uint32_t line) { return line % kBanks; }
inline unsigned bank_of_addr(uint32_t addr) { return bank_of_line(addr / kLineB); }

bool conflicts(const Access& a, const Access& b) {
  if (a.dma && b.dma && (a.parts & b.parts)) return true;  // one DMA port per partition
  return a.bank == b.bank && (a.parts & b.parts);
}

// The documented arbitration of one side (reads or writes), as a reference beside the RTL:
// per bank, the side with priority is served first (pass 0), the other second; within a side the
// lower port number first; a request is granted when the (bank, partitions) it touches are free
// and, for a DMA port, no other DMA port holds its partition. `dma_first` flips on every bank
// where a request was refused. `acc` lists the engine ports first, then the DMA ports.
std::vector<bool> reference_grants(const std::vector<Access>& acc, const std::vector<bool>& req,
                                   std::vector<bool>& dma_first) {
  std::vector<bool> gnt(acc.size(), false);
  std::vector<uint32_t> busy(kBanks, 0);
  uint32_t dma_parts = 0;
  std::vector<bool> conflict(kBanks, false);
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < acc.size(); ++i) {
      const Access& a = acc[i];
      if (!req[i] || ((pass == 0) != (a.dma == dma_first[a.bank]))) continue;
      const bool free = !(busy[a.bank] & a.parts) && !(a.dma && (dma_parts & a.parts));
      if (free) {
        gnt[i] = true;
        busy[a.bank] |= a.parts;
        if (a.dma) dma_parts |= a.parts;
      } else {
        conflict[a.bank] = true;
      }
    }
  }
  for (unsigned b = 0; b < kBanks; ++b)
    if (conflict[b]) dma_first[b] = !dma_first[b];
  return gnt;
}

// Traffic shape of a phase.
struct Traffic {
  const char* name;
  double p_req;     // a free port starts a new request
  double p_hot;     // the request aims at the hot bank / partition
  unsigned hot_bank;
  unsigned hot_part;
};

// ---- the bench -----------------------------------------------------------------------------
template <class M>
class Bench {
 public:
  Bench(unsigned nr, unsigned nw, uint64_t seed)
      : nr_(nr), nw_(nw), ctx_(std::make_unique<VerilatedContext>()), dut_(std::make_unique<M>(ctx_.get())),
        rng_(seed), er_(nr), ew_(nw), dr_(kDma), dw_(kDma), ref_(size_t{kP} * kWords),
        er_exp_(nr), er_known_(nr, 0), dr_exp_(kDma), dr_known_(kDma, false), rd_first_(kBanks, false),
        wr_first_(kBanks, false), max_wait_(nr + nw + 2 * kDma, 0) {
    // Random contents, the same in the storage and the reference.
    auto& mem = dut_->rootp->ncore_sbuf_tb__DOT__u_sbuf__DOT__mem_q;
    for (unsigned p = 0; p < kP; ++p)
      for (unsigned w = 0; w < kWords; ++w) {
        const uint32_t v = static_cast<uint32_t>(rng_());
        mem[p][w] = v;
        ref_[size_t{p} * kWords + w] = v;
      }
    dut_->rst_ni = 0;
    dut_->clk_i = 0;
    idle_inputs();
    dut_->eval();
    for (int k = 0; k < 2; ++k) edge();
    dut_->rst_ni = 1;
    dut_->eval();
  }

  // ---- one cycle --------------------------------------------------------------------------
  // Drives the pending requests, checks the grants, applies the granted writes to the
  // reference, clocks, and checks the read data. Returns false after a failed check.
  bool cycle() {
    drive();
    dut_->clk_i = 0;
    dut_->eval();

    // grants
    const uint64_t egr = get_bits(dut_->er_gnt_o, 0, nr_), egw = get_bits(dut_->ew_gnt_o, 0, nw_);
    const uint64_t dgr = get_bits(dut_->dr_gnt_o, 0, kDma), dgw = get_bits(dut_->dw_gnt_o, 0, kDma);
    std::vector<Access> racc, wacc;
    std::vector<bool> rreq, wreq, rg, wg;
    for (unsigned r = 0; r < nr_; ++r) {
      racc.push_back({false, bank_of_addr(er_[r].addr), er_[r].mask});
      rreq.push_back(er_[r].on);
      rg.push_back((egr >> r) & 1);
    }
    for (unsigned d = 0; d < kDma; ++d) {
      racc.push_back({true, bank_of_line(dr_[d].line), 1u << dr_[d].part});
      rreq.push_back(dr_[d].on);
      rg.push_back((dgr >> d) & 1);
    }
    for (unsigned w = 0; w < nw_; ++w) {
      wacc.push_back({false, bank_of_addr(ew_[w].addr), ew_[w].mask});
      wreq.push_back(ew_[w].on);
      wg.push_back((egw >> w) & 1);
    }
    for (unsigned d = 0; d < kDma; ++d) {
      wacc.push_back({true, bank_of_line(dw_[d].line), 1u << dw_[d].part});
      wreq.push_back(dw_[d].on);
      wg.push_back((dgw >> d) & 1);
    }
    if (!check_side("read", racc, rreq, rg, rd_first_) || !check_side("write", wacc, wreq, wg, wr_first_))
      return false;

    // expected read data (the memory before this edge's writes), then the writes
    for (unsigned r = 0; r < nr_; ++r)
      if (rg[r]) {
        for (unsigned p = 0; p < kP; ++p)
          if ((er_[r].mask >> p) & 1) er_exp_[r][p] = ref_[size_t{p} * kWords + er_[r].addr / 4];
        er_known_[r] |= er_[r].mask;
      }
    for (unsigned d = 0; d < kDma; ++d)
      if (rg[nr_ + d]) {
        for (unsigned k = 0; k < kLineWords; ++k) dr_exp_[d][k] = ref_[size_t{dr_[d].part} * kWords + dr_[d].line * kLineWords + k];
        dr_known_[d] = true;
      }
    for (unsigned w = 0; w < nw_; ++w)
      if (wg[w]) {
        const EngWr& q = ew_[w];
        const unsigned sh = q.addr % 4;
        for (unsigned p = 0; p < kP; ++p) {
          if (!((q.mask >> p) & 1)) continue;
          uint32_t& word = ref_[size_t{p} * kWords + q.addr / 4];
          // the element sits in the low bytes of the lane's data and lands at byte `sh`
          for (unsigned j = sh; j < 4; ++j)
            if ((q.ben >> (j - sh)) & 1) set_byte(word, j, static_cast<uint8_t>(q.data[p] >> (8 * (j - sh))));
        }
        ++writes_;
      }
    for (unsigned d = 0; d < kDma; ++d)
      if (wg[nw_ + d]) {
        const DmaWr& q = dw_[d];
        for (unsigned j = 0; j < kLineB; ++j)
          if ((q.ben >> j) & 1)
            set_byte(ref_[size_t{q.part} * kWords + q.line * kLineWords + j / 4], j % 4,
                     static_cast<uint8_t>(q.data[j / 4] >> (8 * (j % 4))));
        ++writes_;
      }

    // bookkeeping of the requests: granted ones leave, refused ones wait
    auto settle = [&](auto& q, bool g, unsigned idx) {
      if (!q.on) return;
      if (g) {
        q.on = false;
        ++grants_;
        return;
      }
      ++q.wait;
      ++refusals_;
      if (q.wait > max_wait_[idx]) max_wait_[idx] = q.wait;
    };
    for (unsigned r = 0; r < nr_; ++r) settle(er_[r], rg[r], r);
    for (unsigned d = 0; d < kDma; ++d) settle(dr_[d], rg[nr_ + d], nr_ + d);
    for (unsigned w = 0; w < nw_; ++w) settle(ew_[w], wg[w], nr_ + kDma + w);
    for (unsigned d = 0; d < kDma; ++d) settle(dw_[d], wg[nw_ + d], nr_ + kDma + nw_ + d);

    edge();
    ++cycles_;

    // read data: granted reads show the snapshot, the others hold
    for (unsigned r = 0; r < nr_; ++r)
      for (unsigned p = 0; p < kP; ++p) {
        if (!((er_known_[r] >> p) & 1)) continue;
        const uint32_t got = static_cast<uint32_t>(get_bits(dut_->er_rdata_o, (r * kMaxP + p) * 32, 32));
        if (got != er_exp_[r][p]) {
          fail("engine read port " + std::to_string(r) + " lane " + std::to_string(p) + ": data " + hex(got) +
               ", expected " + hex(er_exp_[r][p]));
          return false;
        }
      }
    for (unsigned d = 0; d < kDma; ++d) {
      if (!dr_known_[d]) continue;
      for (unsigned k = 0; k < kLineWords; ++k) {
        const uint32_t got = static_cast<uint32_t>(get_bits(dut_->dr_rdata_o, (d * kLineB * 8) + 32 * k, 32));
        if (got != dr_exp_[d][k]) {
          fail("DMA read port " + std::to_string(d) + " word " + std::to_string(k) + ": data " + hex(got) +
               ", expected " + hex(dr_exp_[d][k]));
          return false;
        }
      }
    }
    if (cycles_ % 256 == 0) return check_storage();
    return true;
  }

  // Random traffic for `n` cycles in the given shape.
  bool run(const Traffic& t, uint64_t n) {
    for (uint64_t c = 0; c < n; ++c) {
      new_requests(t);
      if (!cycle()) return false;
    }
    return true;
  }

  // Lets every pending request finish (no new ones), then compares the storage.
  bool drain() {
    for (int c = 0; c < 1000 && pending(); ++c)
      if (!cycle()) return false;
    if (pending()) {
      fail("requests still pending after 1000 cycles without new traffic");
      return false;
    }
    return check_storage();
  }

  bool check_storage() {
    const auto& mem = dut_->rootp->ncore_sbuf_tb__DOT__u_sbuf__DOT__mem_q;
    for (unsigned p = 0; p < kP; ++p)
      for (unsigned w = 0; w < kWords; ++w)
        if (mem[p][w] != ref_[size_t{p} * kWords + w]) {
          fail("storage partition " + std::to_string(p) + " byte " + hex(4 * w) + ": " + hex(mem[p][w]) +
               ", reference " + hex(ref_[size_t{p} * kWords + w]));
          return false;
        }
    return true;
  }

  bool pending() const {
    for (const auto& q : er_) if (q.on) return true;
    for (const auto& q : ew_) if (q.on) return true;
    for (const auto& q : dr_) if (q.on) return true;
    for (const auto& q : dw_) if (q.on) return true;
    return false;
  }

  // Direct access for the directed tests.
  EngRd& er(unsigned r) { return er_[r]; }
  EngWr& ew(unsigned w) { return ew_[w]; }
  DmaRd& dr(unsigned d) { return dr_[d]; }
  DmaWr& dw(unsigned d) { return dw_[d]; }
  M& dut() { return *dut_; }
  uint32_t ref_word(unsigned p, unsigned w) const { return ref_[size_t{p} * kWords + w]; }
  // Grants of the last cycle: bits [engine ports, DMA ports] of each side.
  uint64_t last_read_grants() const { return last_rg_; }
  uint64_t last_write_grants() const { return last_wg_; }

  const std::string& error() const { return error_; }
  uint64_t cycles() const { return cycles_; }
  uint64_t grants() const { return grants_; }
  uint64_t refusals() const { return refusals_; }
  uint64_t writes() const { return writes_; }
  // Longest wait of a request, by port: engine reads, DMA reads, engine writes, DMA writes.
  const std::vector<uint64_t>& max_wait() const { return max_wait_; }
  std::string wait_report() const {
    std::ostringstream s;
    unsigned i = 0;
    for (unsigned r = 0; r < nr_; ++r) s << "er" << r << "=" << max_wait_[i++] << " ";
    for (unsigned d = 0; d < kDma; ++d) s << "dr" << d << "=" << max_wait_[i++] << " ";
    for (unsigned w = 0; w < nw_; ++w) s << "ew" << w << "=" << max_wait_[i++] << " ";
    for (unsigned d = 0; d < kDma; ++d) s << "dw" << d << "=" << max_wait_[i++] << " ";
    return s.str();
  }
  void reset_waits() { std::fill(max_wait_.begin(), max_wait_.end(), 0); }
  unsigned nr() const { return nr_; }
  unsigned nw() const { return nw_; }

 private:
  static void set_byte(uint32_t& w, unsigned j, uint8_t b) {
    w = (w & ~(0xFFu << (8 * j))) | (uint32_t{b} << (8 * j));
  }

  void edge() {
    dut_->clk_i = 1;
    dut_->eval();
    dut_->clk_i = 0;
    dut_->eval();
  }

  void idle_inputs() {
    put_bits(dut_->er_req_i, 0, nr_, 0);
    put_bits(dut_->ew_req_i, 0, nw_, 0);
    put_bits(dut_->dr_req_i, 0, kDma, 0);
    put_bits(dut_->dw_req_i, 0, kDma, 0);
  }

  void drive() {
    for (unsigned r = 0; r < nr_; ++r) {
      put_bits(dut_->er_req_i, r, 1, er_[r].on);
      put_bits(dut_->er_addr_i, r * kAddrW, kAddrW, er_[r].addr);
      put_bits(dut_->er_mask_i, r * kMaxP, kMaxP, er_[r].mask);
    }
    for (unsigned w = 0; w < nw_; ++w) {
      put_bits(dut_->ew_req_i, w, 1, ew_[w].on);
      put_bits(dut_->ew_addr_i, w * kAddrW, kAddrW, ew_[w].addr);
      put_bits(dut_->ew_mask_i, w * kMaxP, kMaxP, ew_[w].mask);
      put_bits(dut_->ew_ben_i, w * 4, 4, ew_[w].ben);
      for (unsigned p = 0; p < kMaxP; ++p) put_bits(dut_->ew_wdata_i, (w * kMaxP + p) * 32, 32, ew_[w].data[p]);
    }
    for (unsigned d = 0; d < kDma; ++d) {
      put_bits(dut_->dr_req_i, d, 1, dr_[d].on);
      put_bits(dut_->dr_part_i, d * kPartW, kPartW, dr_[d].part);
      put_bits(dut_->dr_line_i, d * kLineAddrW, kLineAddrW, dr_[d].line);
      put_bits(dut_->dw_req_i, d, 1, dw_[d].on);
      put_bits(dut_->dw_part_i, d * kPartW, kPartW, dw_[d].part);
      put_bits(dut_->dw_line_i, d * kLineAddrW, kLineAddrW, dw_[d].line);
      put_bits(dut_->dw_ben_i, d * kLineB, kLineB, dw_[d].ben);
      for (unsigned k = 0; k < kLineWords; ++k) put_bits(dut_->dw_wdata_i, d * kLineB * 8 + 32 * k, 32, dw_[d].data[k]);
    }
  }

  // The rules of one side; updates the reference priority state.
  bool check_side(const char* side, const std::vector<Access>& acc, const std::vector<bool>& req,
                  const std::vector<bool>& gnt, std::vector<bool>& first) {
    const unsigned neng = static_cast<unsigned>(acc.size()) - kDma;
    auto name = [&](size_t i) {
      return std::string(side) + (i < neng ? " engine port " + std::to_string(i) : " DMA port " + std::to_string(i - neng));
    };
    uint64_t bits = 0;
    for (size_t i = 0; i < acc.size(); ++i) bits |= uint64_t{gnt[i]} << i;
    (std::string(side) == "read" ? last_rg_ : last_wg_) = bits;
    for (size_t i = 0; i < acc.size(); ++i) {
      if (gnt[i] && !req[i]) {
        fail(name(i) + " granted without a request");
        return false;
      }
      // masks of 0 touch nothing: they can neither conflict nor be refused
      for (size_t j = i + 1; j < acc.size(); ++j)
        if (gnt[i] && gnt[j] && conflicts(acc[i], acc[j])) {
          fail(name(i) + " and " + name(j) + " both granted on bank " + std::to_string(acc[i].bank) + " partitions " +
               hex(acc[i].parts & acc[j].parts));
          return false;
        }
      if (req[i] && !gnt[i]) {
        bool reason = false;
        for (size_t j = 0; j < acc.size(); ++j) reason |= j != i && gnt[j] && conflicts(acc[i], acc[j]);
        if (!reason) {
          fail(name(i) + " refused with no conflicting grant (bank " + std::to_string(acc[i].bank) + ", partitions " +
               hex(acc[i].parts) + ")");
          return false;
        }
      }
    }
    const std::vector<bool> want = reference_grants(acc, req, first);
    for (size_t i = 0; i < acc.size(); ++i)
      if (want[i] != gnt[i]) {
        fail(name(i) + (gnt[i] ? " granted" : " refused") + " where the documented arbitration " +
             (want[i] ? "grants" : "refuses") + " it (bank " + std::to_string(acc[i].bank) + ")");
        return false;
      }
    return true;
  }

  void new_requests(const Traffic& t) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    auto hot = [&] { return u(rng_) < t.p_hot; };
    auto line_in = [&](bool h) -> uint32_t {
      // hot: a few lines of the hot bank, so that words and lines repeat too
      if (h) return static_cast<uint32_t>((rng_() % 4) * kBanks + t.hot_bank);
      return static_cast<uint32_t>(rng_() % kLines);
    };
    auto lanes = [&](bool h) -> uint16_t {
      uint16_t m;
      switch (rng_() % 10) {
        case 0: case 1: case 2: m = 0xFFFF; break;
        case 3: case 4: m = static_cast<uint16_t>(1u << (rng_() % kP)); break;
        case 5: m = 0; break;  // a request for no lane at all: harmless, granted at once
        default: m = static_cast<uint16_t>(rng_()); break;
      }
      if (h) m |= static_cast<uint16_t>(1u << t.hot_part);
      return m;
    };
    for (auto& q : er_)
      if (!q.on && u(rng_) < t.p_req) {
        const bool h = hot();
        q.on = true;
        q.wait = 0;
        q.addr = line_in(h) * kLineB + static_cast<uint32_t>(rng_() % kLineB) / 2 * 2;  // 2-byte aligned
        q.mask = lanes(h);
      }
    for (auto& q : ew_)
      if (!q.on && u(rng_) < t.p_req) {
        const bool h = hot();
        q.on = true;
        q.wait = 0;
        const uint32_t word = line_in(h) * kLineWords + static_cast<uint32_t>(rng_() % kLineWords);
        switch (rng_() % 4) {
          case 0:  // 2-byte element at byte 0 or 2 (upper data bits are junk and must not land)
          case 1:
            q.addr = word * 4 + (rng_() % 2) * 2;
            q.ben = (rng_() % 4 == 0) ? static_cast<uint8_t>(1 + rng_() % 3) : 0x3;
            break;
          case 2:  // 4-byte element
            q.addr = word * 4;
            q.ben = 0xF;
            break;
          default:  // 4-byte word, any byte enables
            q.addr = word * 4;
            q.ben = static_cast<uint8_t>(rng_() % 16);
            break;
        }
        q.mask = lanes(h);
        for (auto& d : q.data) d = static_cast<uint32_t>(rng_());
      }
    for (auto& q : dr_)
      if (!q.on && u(rng_) < t.p_req) {
        const bool h = hot();
        q.on = true;
        q.wait = 0;
        q.part = h ? t.hot_part : static_cast<uint32_t>(rng_() % kP);
        q.line = line_in(h);
      }
    for (auto& q : dw_)
      if (!q.on && u(rng_) < t.p_req) {
        const bool h = hot();
        q.on = true;
        q.wait = 0;
        q.part = h ? t.hot_part : static_cast<uint32_t>(rng_() % kP);
        q.line = line_in(h);
        q.ben = (rng_() % 2) ? 0xFFFF : static_cast<uint16_t>(rng_());
        for (auto& d : q.data) d = static_cast<uint32_t>(rng_());
      }
  }

  void fail(const std::string& what) {
    if (error_.empty()) error_ = "cycle " + std::to_string(cycles_) + ": " + what;
  }

  unsigned nr_, nw_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<M> dut_;
  std::mt19937_64 rng_;
  std::vector<EngRd> er_;
  std::vector<EngWr> ew_;
  std::vector<DmaRd> dr_;
  std::vector<DmaWr> dw_;
  std::vector<uint32_t> ref_;
  std::vector<std::array<uint32_t, kMaxP>> er_exp_;
  std::vector<uint32_t> er_known_;  // lanes of each engine read port whose data is known
  std::vector<std::array<uint32_t, 4>> dr_exp_;
  std::vector<bool> dr_known_;
  std::vector<bool> rd_first_, wr_first_;  // reference priority per bank: DMA side first
  std::vector<uint64_t> max_wait_;
  uint64_t cycles_ = 0, grants_ = 0, refusals_ = 0, writes_ = 0;
  uint64_t last_rg_ = 0, last_wg_ = 0;
  std::string error_;
};

// The phases of a random run: uniform traffic, then aimed at one bank, at one bank and one
// partition, then everything on the hot spot at a high rate.
std::vector<Traffic> phases() {
  return {
      {"uniform", 0.7, 0.0, 0, 0},
      {"hot bank 1, partition 5", 0.7, 0.6, 1, 5},
      {"hot bank 3, partition 12", 0.8, 0.8, 3, 12},
      {"all on bank 0, partition 0", 0.6, 1.0, 0, 0},
      {"uniform, full rate", 1.0, 0.0, 0, 0},
  };
}

// Bounds on the retries of one request. Port 0 of each side is never refused twice in a row: a
// refusal flips the bank's priority to its side, and it is first on its side. The other ports
// have no hard bound: within a side the lower port number wins, so a port 0 that keeps asking
// for the same bank and partition holds off port 1 for as long as it does (documented). Under
// random traffic that ends soon (the default runs see at most ~130 retries, at 60-80 % request
// rate aimed at one bank and partition); this bound only catches a real starvation. With every
// port asking every cycle there is no bound at all, so the full-rate phase is not held to it.
constexpr uint64_t kMaxRetriesOther = 512;

template <class M>
void random_run(unsigned nr, unsigned nw, uint64_t cycles_per_phase, uint64_t seed) {
  Bench<M> b(nr, nw, seed);
  std::string waits;
  for (const Traffic& t : phases()) {
    INFO("phase: " << t.name);
    b.reset_waits();
    const bool ok = b.run(t, cycles_per_phase) && b.drain();
    INFO(b.error());
    REQUIRE(ok);
    const auto& mw = b.max_wait();
    INFO("longest waits (retries): " << b.wait_report());
    waits += std::string("\n  ") + t.name + ": " + b.wait_report();
    CHECK(mw[0] <= 1);               // engine read port 0
    CHECK(mw[nr] <= 1);              // DMA read port 0
    CHECK(mw[nr + kDma] <= 1);       // engine write port 0
    CHECK(mw[nr + kDma + nw] <= 1);  // DMA write port 0
    if (t.p_req < 1.0)
      for (uint64_t w : mw) CHECK(w <= kMaxRetriesOther);
  }
  WARN("sbuf " << nr << "+" << nw << " engine ports: " << b.cycles() << " cycles, " << b.grants() << " grants, "
               << b.refusals() << " refusals, " << b.writes() << " writes; longest waits (retries) by phase:" << waits);
  CHECK(b.refusals() > b.cycles() / 10);  // the traffic did conflict
}

uint64_t env_count(const char* name, uint64_t dflt) {
  const char* s = std::getenv(name);
  return s && *s ? std::strtoull(s, nullptr, 0) : dflt;
}

}  // namespace

TEST_CASE("SBUF random traffic, one engine port per side", "[sbuf]") {
  random_run<Vncore_sbuf_tb1>(1, 1, 50000, 1);
}

TEST_CASE("SBUF random traffic, two engine ports per side", "[sbuf]") {
  random_run<Vncore_sbuf_tb2>(2, 2, 50000, 2);
}

TEST_CASE("SBUF random traffic, long run", "[sbuf][.long]") {
  const uint64_t n = env_count("NCORE_SBUF_LONG_CYCLES", 1000000) / phases().size();
  random_run<Vncore_sbuf_tb1>(1, 1, n, 11);
  random_run<Vncore_sbuf_tb2>(2, 2, n, 12);
}

TEST_CASE("SBUF priority between the engine and DMA sides flips after each conflict", "[sbuf]") {
  Bench<Vncore_sbuf_tb2> b(2, 2, 3);
  // Engine port 0 and DMA port 0 ask for bank 2 of partition 7 every cycle (a new request as
  // soon as the last one is granted): the grants must alternate, starting with the engine side
  // (reset priority), on reads and writes alike.
  auto ask = [&](unsigned cycle) {
    b.er(0) = EngRd{true, (2 + 4 * (cycle % 3)) * kLineB + 4, 0x0080, 0};
    b.dr(0) = DmaRd{true, 7, 2 + 4 * ((cycle + 1) % 5), 0};
    EngWr w;
    w.on = true;
    w.addr = (2 + 4 * (cycle % 7)) * kLineB + 8;
    w.mask = 0x00F0;
    w.ben = 0xF;
    w.data.fill(cycle);
    b.ew(0) = w;
    b.dw(0) = DmaWr{true, 7, 6 + 4 * (cycle % 2), 0xFFFF, {cycle, cycle, cycle, cycle}, 0};
  };
  for (unsigned c = 0; c < 41; ++c) {
    ask(c);
    REQUIRE(b.cycle());
    INFO("cycle " << c);
    const uint64_t want = (c % 2 == 0) ? 0b0001 : 0b0100;  // [er0 er1 dr0 dr1]: engine, then DMA
    CHECK(b.last_read_grants() == want);
    CHECK(b.last_write_grants() == want);
  }
  // Priority is per bank. After 41 conflicts bank 2 gives the DMA side priority; bank 1 has had
  // none, so there the engine side still goes first. Both banks then alternate, out of phase.
  for (unsigned c = 0; c < 6; ++c) {
    ask(c);                                        // bank 2 keeps conflicting
    b.er(1) = EngRd{true, 1 * kLineB, 0x0001, 0};  // bank 1, partition 0
    b.dr(1) = DmaRd{true, 0, 1, 0};                // bank 1, partition 0
    REQUIRE(b.cycle());
    INFO("cycle " << c);
    CHECK(b.last_read_grants() == ((c % 2 == 0) ? 0b0110 : 0b1001));
  }
  INFO(b.error());
  REQUIRE(b.drain());
}

TEST_CASE("SBUF within a side the lower port number wins", "[sbuf]") {
  Bench<Vncore_sbuf_tb2> b(2, 2, 4);
  for (unsigned c = 0; c < 10; ++c) {
    // engine ports 0 and 1 on bank 3 with overlapping lanes; DMA ports 0 and 1 on partition 9
    // (one DMA port per partition), both on bank 0; no cross-side conflict. (Two DMA ports on one
    // partition but on banks whose priorities differ are served in pass order instead: the
    // random runs check that case against the reference arbitration.)
    b.er(0) = EngRd{true, 3 * kLineB, 0x0003, 0};
    b.er(1) = EngRd{true, 7 * kLineB, 0x0006, 0};
    b.dr(0) = DmaRd{true, 9, 4, 0};
    b.dr(1) = DmaRd{true, 9, 8, 0};
    REQUIRE(b.cycle());
    CHECK(b.last_read_grants() == 0b0101);
  }
  // a request that conflicts with nobody is granted together with the others
  b.er(0) = EngRd{true, 3 * kLineB, 0x0003, 0};
  b.er(1) = EngRd{true, 6 * kLineB, 0x0006, 0};   // bank 2
  b.dr(0) = DmaRd{true, 9, 4, 0};
  b.dr(1) = DmaRd{true, 10, 4, 0};                // bank 0 of another partition
  REQUIRE(b.cycle());
  CHECK(b.last_read_grants() == 0b1111);
  INFO(b.error());
  REQUIRE(b.drain());
}

TEST_CASE("SBUF byte enables and 2-byte engine elements at bytes 0 and 2", "[sbuf]") {
  Bench<Vncore_sbuf_tb1> b(1, 1, 5);
  auto write = [&](uint32_t addr, uint16_t mask, uint8_t ben, uint32_t data) {
    EngWr w;
    w.on = true;
    w.addr = addr;
    w.mask = mask;
    w.ben = ben;
    w.data.fill(data);
    b.ew(0) = w;
    REQUIRE(b.cycle());
    REQUIRE(b.last_write_grants() == 0b001);
  };
  auto word = [&](unsigned p, unsigned w) { return b.dut().rootp->ncore_sbuf_tb__DOT__u_sbuf__DOT__mem_q[p][w]; };
  const unsigned w = 37;
  write(4 * w, 0x0030, 0xF, 0x11223344u);      // partitions 4, 5: whole word
  write(4 * w + 2, 0x0010, 0x3, 0xDEADAAAAu);  // partition 4: element at byte 2, junk above
  write(4 * w, 0x0010, 0x3, 0xBEEFBBBBu);      // partition 4: element at byte 0
  write(4 * w, 0x0020, 0x4, 0x00CC0000u);      // partition 5: byte 2 alone
  write(4 * w + 2, 0x0020, 0x2, 0x0000DD00u);  // partition 5: byte 1 of an element at byte 2
  CHECK(word(4, w) == 0xAAAABBBBu);
  CHECK(word(5, w) == 0xDDCC3344u);
  // DMA: bytes 1 and 14 of line 9 of partition 2
  b.dw(0) = DmaWr{true, 2, 9, 0x4002, {0x04030201u, 0x08070605u, 0x0C0B0A09u, 0x100F0E0Du}, 0};
  const uint32_t before0 = word(2, 36), before3 = word(2, 39);
  REQUIRE(b.cycle());
  CHECK(word(2, 36) == ((before0 & 0xFFFF00FFu) | 0x0200u));
  CHECK(word(2, 39) == ((before3 & 0xFF00FFFFu) | 0x000F0000u));
  // read back through both kinds of port
  b.er(0) = EngRd{true, 4 * w + 2, 0x0030, 0};
  b.dr(1) = DmaRd{true, 2, 9, 0};
  REQUIRE(b.cycle());
  CHECK(get_bits(b.dut().er_rdata_o, 4 * 32, 32) == 0xAAAABBBBu);
  CHECK(get_bits(b.dut().er_rdata_o, 5 * 32, 32) == 0xDDCC3344u);
  CHECK(get_bits(b.dut().dr_rdata_o, 1 * 128 + 8, 8) == 0x02u);
  CHECK(get_bits(b.dut().dr_rdata_o, 1 * 128 + 14 * 8, 8) == 0x0Fu);
  INFO(b.error());
  REQUIRE(b.drain());
}
