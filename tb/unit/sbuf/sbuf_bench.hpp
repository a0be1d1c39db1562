// The SBUF bench: rtl/ncore_sbuf.sv Verilated on its own (tiny preset: 16 partitions x 4 KiB, 4
// banks of 16-byte lines, 2 DMA ports per side), with one or two engine ports per side, beside a
// C++ reference memory and a C++ model of the documented arbitration.
//
// Every port holds its request until it is granted, as the engines do. Every cycle the bench
// checks, before the clock edge:
//   - no grant without a request;
//   - no two grants that the documented rules forbid: on one side (reads, or writes) two grants
//     touching the same bank of the same partition, or two DMA ports on one partition;
//   - no refusal without a reason: every refused request conflicts with a granted one;
//   - the grants are exactly those of the documented arbitration: per bank the side with
//     priority first, lower port number first within a side, and the bank's priority flips after
//     every cycle with a conflict on it (reference_grants, kept beside the RTL);
// and after the edge:
//   - the read data of every granted read, from the reference memory as it was before the
//     edge (a read and a write of the same word in one cycle returns the old word), and that
//     the data of every port holds until its next granted read (lanes outside the mask too);
//   - the storage equals the reference memory, which applies exactly the granted writes with
//     their byte enables (every 256 cycles and at the end).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_bits.hpp"
#include "bench_dut.hpp"
#include "mem_ports.hpp"
#include "ncore/presets_gen.hpp"
#include "verilated.h"

namespace sbuf_tb {

using namespace ncore::tb;

const unsigned kP = static_cast<unsigned>(tiny().num_partitions);
const unsigned kBytes = static_cast<unsigned>(tiny().sbuf_bytes);
const unsigned kWords = kBytes / 4;
const unsigned kBanks = static_cast<unsigned>(tiny().sbuf_banks);
const unsigned kLineB = static_cast<unsigned>(tiny().sbuf_line_bytes);
const unsigned kLineWords = kLineB / 4;
const unsigned kLines = kBytes / kLineB;
const unsigned kDma = static_cast<unsigned>(tiny().dma_engines);
constexpr unsigned kMaxP = 16;      // port widths of the Verilated model (tiny preset)
constexpr unsigned kAddrW = 12;     // $clog2(SbufBytes)
constexpr MemWidths kDmaPort{kMaxP, kAddrW};  // the DMA ports' structs (ncore_mem_pkg, the tiny model's widths)

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

inline bool conflicts(const Access& a, const Access& b) {
  if (a.dma && b.dma && (a.parts & b.parts)) return true;  // one DMA port per partition
  return a.bank == b.bank && (a.parts & b.parts);
}

// The documented arbitration of one side (reads or writes), as a reference beside the RTL:
// per bank, the side with priority is served first (pass 0), the other second; within a side the
// lower port number first; a request is granted when the (bank, partitions) it touches are free
// and, for a DMA port, no other DMA port holds its partition. `dma_first` flips on every bank
// where a request was refused. `acc` lists the engine ports first, then the DMA ports.
inline std::vector<bool> reference_grants(const std::vector<Access>& acc, const std::vector<bool>& req,
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

// The accesses of one side (reads, or writes) in a cycle, engine ports first: what each asks
// for, whether it asks, whether it is granted.
struct Side {
  std::vector<Access> acc;
  std::vector<bool> req, gnt;
  void add(const Access& a, bool on, bool granted) {
    acc.push_back(a);
    req.push_back(on);
    gnt.push_back(granted);
  }
};

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
      : nr_(nr), nw_(nw), rng_(seed), er_(nr), ew_(nw), dr_(kDma), dw_(kDma), ref_(size_t{kP} * kWords),
        er_exp_(nr), er_known_(nr, 0), dr_exp_(kDma), dr_known_(kDma, false), rd_first_(kBanks, false),
        wr_first_(kBanks, false), max_wait_(nr + nw + 2 * kDma, 0) {
    // Random contents, the same in the storage and the reference.
    const auto& mem = dut_.memory("ncore_sbuf.u_mem");
    for (unsigned p = 0; p < kP; ++p)
      for (unsigned w = 0; w < kWords; ++w) {
        const uint32_t v = static_cast<uint32_t>(rng_());
        mem.row(p)[w] = v;
        ref_[size_t{p} * kWords + w] = v;
      }
    idle_inputs();
    dut_.reset();
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
    uint64_t dgr = 0, dgw = 0;
    for (unsigned d = 0; d < kDma; ++d) {
      dgr |= uint64_t{line_rd_gnt(dut_->dr_rsp_o[d])} << d;
      dgw |= uint64_t{dut_->dw_rsp_o[d] & 1u} << d;
    }
    Side rd, wr;  // engine ports, then DMA ports
    for (unsigned r = 0; r < nr_; ++r)
      rd.add({false, bank_of_addr(er_[r].addr), er_[r].mask}, er_[r].on, (egr >> r) & 1);
    for (unsigned d = 0; d < kDma; ++d)
      rd.add({true, bank_of_line(dr_[d].line), 1u << dr_[d].part}, dr_[d].on, (dgr >> d) & 1);
    for (unsigned w = 0; w < nw_; ++w)
      wr.add({false, bank_of_addr(ew_[w].addr), ew_[w].mask}, ew_[w].on, (egw >> w) & 1);
    for (unsigned d = 0; d < kDma; ++d)
      wr.add({true, bank_of_line(dw_[d].line), 1u << dw_[d].part}, dw_[d].on, (dgw >> d) & 1);
    if (!check_side("read", rd, rd_first_) || !check_side("write", wr, wr_first_)) return false;
    const std::vector<bool>&rg = rd.gnt, &wg = wr.gnt;

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
        for (unsigned p = 0; p < kP; ++p)
          if ((q.mask >> p) & 1) merge_element(ref_[size_t{p} * kWords + q.addr / 4], q.addr, q.ben, q.data[p]);
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

    dut_.edge();
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
        const uint32_t got = line_rd_word(dut_->dr_rsp_o[d], k);
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
    const auto& mem = dut_.memory("ncore_sbuf.u_mem");
    for (unsigned p = 0; p < kP; ++p)
      for (unsigned w = 0; w < kWords; ++w)
        if (mem.word(p, w) != ref_[size_t{p} * kWords + w]) {
          fail("storage partition " + std::to_string(p) + " byte " + hex(4 * w) + ": " + hex(mem.word(p, w)) +
               ", reference " + hex(ref_[size_t{p} * kWords + w]));
          return false;
        }
    return true;
  }

  bool pending() const { return any_request_on(er_, ew_, dr_, dw_); }

  // Direct access for the directed tests.
  EngRd& er(unsigned r) { return er_[r]; }
  EngWr& ew(unsigned w) { return ew_[w]; }
  DmaRd& dr(unsigned d) { return dr_[d]; }
  DmaWr& dw(unsigned d) { return dw_[d]; }
  M& dut() { return *dut_; }
  // A word of the storage, through the trace interface.
  uint32_t storage(unsigned p, unsigned w) { return dut_.memory("ncore_sbuf.u_mem").word(p, w); }
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
  void idle_inputs() {
    put_bits(dut_->er_req_i, 0, nr_, 0);
    put_bits(dut_->ew_req_i, 0, nw_, 0);
    for (unsigned d = 0; d < kDma; ++d) {
      put_line_rd_req(dut_->dr_req_i[d], kDmaPort, false, 0, 0);
      put_line_wr_req(dut_->dw_req_i[d], kDmaPort, false, 0, 0, 0, std::array<uint32_t, 4>{});
    }
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
      put_line_rd_req(dut_->dr_req_i[d], kDmaPort, dr_[d].on, dr_[d].part, dr_[d].line);
      put_line_wr_req(dut_->dw_req_i[d], kDmaPort, dw_[d].on, dw_[d].part, dw_[d].line, dw_[d].ben, dw_[d].data);
    }
  }

  // The rules of one side; updates the reference priority state.
  bool check_side(const char* side, const Side& sd, std::vector<bool>& first) {
    const std::vector<Access>& acc = sd.acc;
    const std::vector<bool>&req = sd.req, &gnt = sd.gnt;
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
      if (request_starts(q, rng_, t.p_req)) {
        const bool h = hot();
        q.addr = line_in(h) * kLineB + static_cast<uint32_t>(rng_() % kLineB) / 2 * 2;  // 2-byte aligned
        q.mask = lanes(h);
      }
    for (auto& q : ew_)
      if (request_starts(q, rng_, t.p_req)) {
        const bool h = hot();
        const uint32_t word = line_in(h) * kLineWords + static_cast<uint32_t>(rng_() % kLineWords);
        engine_write_element(rng_, word, q.addr, q.ben);
        q.mask = lanes(h);
        for (auto& d : q.data) d = static_cast<uint32_t>(rng_());
      }
    for (auto& q : dr_)
      if (request_starts(q, rng_, t.p_req)) {
        const bool h = hot();
        q.part = h ? t.hot_part : static_cast<uint32_t>(rng_() % kP);
        q.line = line_in(h);
      }
    for (auto& q : dw_)
      if (request_starts(q, rng_, t.p_req)) {
        const bool h = hot();
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
  Dut<M> dut_;
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

}  // namespace sbuf_tb
