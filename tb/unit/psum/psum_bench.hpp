// The PSUM bench: rtl/ncore_psum.sv Verilated on its own, built on the tiny preset
// (16 partitions x 1 KiB, 4 banks of 64 words) with three engine read and two engine write ports,
// and on the trn2 preset (128 partitions x 16 KiB, 8 banks of 512 words) with one of each.
//
// Traffic. The tensor engine's port writes every cycle it has something, never waits, and comes
// in two shapes: results streamed as the PE array's bottom edge delivers them (a result of n
// words for partitions q..q+m-1 at a base word of one bank; partition q+i writes word j at cycle
// start + i + j, so the partitions are at different words of the result in one cycle;
// accumulation groups: the same region written again with accumulate on), and independent random
// lanes (any valid, word and accumulate flag per partition, some phases on a handful of words so
// that a word is accumulated cycle after cycle). The engine ports hold a request until it is
// granted, as the engines do: reads at 2-byte aligned addresses, writes of 4-byte words with any
// byte enables or 2-byte elements at byte 0 or 2 (junk above the element), lane masks full, one
// lane, random, a range or empty; phases aim them at the bank and partitions the tensor engine
// writes, at one bank and a few words, or nowhere in particular. The values are the numerics
// bench's fp32 patterns (tb/unit/common) or, in the special-value phases, only zeros of both
// signs, infinities, NaNs with payloads, subnormals, the largest finite values and rounding ties.
//
// Every cycle, before the clock edge, the grants must be exactly those of the documented
// arbitration, computed here from the header's rules (reference_grants): the tensor engine holds
// the read and the write port of every (bank, partition) it writes; then, reads and writes
// separately, in port order, a request is granted when none of its lanes is held on its bank, and
// then holds them. So: a refused access always has a reason (the tensor engine or a lower port),
// no grant without a request, the tensor engine always wins. After the edge:
//   - every granted read returns the reference memory as it was before the edge (a read and a
//     write of the same word in one cycle read the old word), and every port's data holds until
//     its next granted read (lanes outside the mask too);
//   - every word written this cycle equals the reference: a tensor-engine overwrite stores the
//     data's bits, an accumulate stores ncore::num::alu(add, old, data) (the golden numerics:
//     host binary32 addition, round to nearest even, subnormals kept, any NaN canonical), an
//     engine write merges its bytes (so every tensor-engine write is taken, in its cycle, and a
//     refused engine write changes nothing);
//   - the performance counters equal the bytes of the granted accesses (header's rules);
// and the whole storage equals the reference every 64 cycles (every 1024 on trn2) and at the end
// of every phase. After a phase the traffic stops and every pending request must be granted
// within one cycle per port (nothing else holds a bank then).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_bits.hpp"
#include "bench_dut.hpp"
#include "mem_ports.hpp"
#include "psum_ports.hpp"
#include "psum_traffic.hpp"
#include "verilated.h"

namespace psum_tb {

// What the traffic met, for the report and the coverage checks.
struct PsumTally {
  uint64_t cycles = 0, pe_writes = 0, pe_acc = 0, pe_acc_nan = 0, pe_acc_inf = 0, pe_acc_inf_minus_inf = 0,
           pe_acc_sub = 0, pe_acc_neg_zero = 0, pe_acc_zero_signs = 0, pe_acc_same_word_next_cycle = 0;
  uint64_t rd_grants = 0, wr_grants = 0, refused_by_pe = 0, refused_by_port = 0, same_word_rw = 0;
  uint64_t max_wait = 0;
};

// ---- the bench ---------------------------------------------------------------------------------
template <class M>
class Bench {
 public:
  Bench(const Geometry& g, uint64_t seed)
      : g_(g), rng_(seed), traffic_(g, rng_), er_(g.nr), ew_(g.nw), pe_(g.P), ref_(size_t{g.P} * g.words),
        er_exp_(g.nr, std::vector<uint32_t>(g.P, 0)), er_known_(g.nr), last_acc_word_(g.P, ~0u) {
    for (auto& w : ew_) w.data.assign(g_.P, 0);
    // Random fp32 patterns, the same in the storage and the reference.
    const auto& mem = storage();
    for (unsigned p = 0; p < g_.P; ++p)
      for (unsigned w = 0; w < g_.words; ++w) {
        const uint32_t v = random_f32(rng_);
        mem.row(p)[w] = v;
        ref(p, w) = v;
      }
    drive();
    dut_.reset();
    check_perf();
  }

  // The tensor engine's writes and the granted engine writes, into the reference; `touched_` lists
  // the words to compare after the edge.
  void apply_writes(const std::vector<bool>& wg) {
    touched_.clear();
    for (unsigned p = 0; p < g_.P; ++p) {
      const PeLane& l = pe_[p];
      if (!l.valid) {
        last_acc_word_[p] = ~0u;
        continue;
      }
      uint32_t& word = ref(p, l.word);
      const uint32_t old = word;
      if (l.acc) {
        word = ref_add(old, l.data);
        tally_acc(old, l.data, word);
        if (last_acc_word_[p] == l.word) ++t_.pe_acc_same_word_next_cycle;
        last_acc_word_[p] = l.word;
      } else {
        word = l.data;
        last_acc_word_[p] = ~0u;
      }
      ++t_.pe_writes;
      perf_wr_ += 4;
      touched_.push_back({p, l.word, "tensor-engine " + std::string(l.acc ? "accumulate " : "overwrite ") + hex(old) +
                                         (l.acc ? " + " : " <- ") + hex(l.data)});
    }
    for (unsigned w = 0; w < g_.nw; ++w) {
      if (!wg[w]) continue;
      const WrReq& q = ew_[w];
      for (unsigned p = 0; p < g_.P; ++p) {
        if (!q.mask[p]) continue;
        uint32_t& word = ref(p, q.addr / 4);
        const uint32_t old = word;
        merge_element(word, q.addr, q.ben, q.data[p]);
        touched_.push_back({p, q.addr / 4, "engine write port " + std::to_string(w) + " byte " + hex(q.addr) +
                                               " ben " + hex(q.ben) + " data " + hex(q.data[p]) + " on " + hex(old)});
      }
      perf_wr_ += q.mask.count() * static_cast<uint64_t>(__builtin_popcount(q.ben));
      ++t_.wr_grants;
    }
  }

  // ---- one cycle --------------------------------------------------------------------------------
  // Drives the tensor-engine lanes in pe_ and the pending engine requests, checks the grants,
  // applies the tensor engine's writes and the granted engine writes to the reference, clocks,
  // and checks read data, written words and counters. False after a failed check.
  bool cycle() {
    if (!error_.empty()) return false;
    drive();
    dut_->clk_i = 0;
    dut_->eval();

    // grants: exactly the documented arbitration
    std::vector<bool> rg(g_.nr), wg(g_.nw), rref, wref;
    for (unsigned r = 0; r < g_.nr; ++r) rg[r] = get_bits(dut_->er_gnt_o, r, 1);
    for (unsigned w = 0; w < g_.nw; ++w) wg[w] = get_bits(dut_->ew_gnt_o, w, 1);
    std::vector<std::string> rwhy, wwhy;
    reference_grants(rref, wref, rwhy, wwhy);
    auto same = [&](const char* side, const auto& reqs, const std::vector<bool>& got, const std::vector<bool>& want,
                    const std::vector<std::string>& why) {
      for (size_t i = 0; i < reqs.size(); ++i)
        if (got[i] != want[i]) {
          fail(std::string("engine ") + side + " port " + std::to_string(i) + (reqs[i].on ? "" : " (no request)") +
               " byte " + hex(reqs[i].addr) + " bank " + std::to_string(bank_of_addr(reqs[i].addr)) +
               (got[i] ? " granted" : " refused") + ", the rules say " + (want[i] ? "granted" : "refused: " + why[i]));
          return false;
        }
      return true;
    };
    if (!same("read", er_, rg, rref, rwhy) || !same("write", ew_, wg, wref, wwhy)) return false;
    last_rg_ = last_wg_ = 0;
    for (unsigned r = 0; r < g_.nr; ++r) last_rg_ |= uint64_t{rg[r]} << r;
    for (unsigned w = 0; w < g_.nw; ++w) last_wg_ |= uint64_t{wg[w]} << w;

    // expected read data: the memory before this edge
    for (unsigned r = 0; r < g_.nr; ++r)
      if (rg[r]) {
        for (unsigned p = 0; p < g_.P; ++p)
          if (er_[r].mask[p]) er_exp_[r][p] = ref(p, er_[r].addr / 4);
        er_known_[r] |= er_[r].mask;
        perf_rd_ += 4 * er_[r].mask.count();
        ++t_.rd_grants;
      }
    // same word read and written by engine ports in this cycle
    for (unsigned r = 0; r < g_.nr; ++r)
      for (unsigned w = 0; w < g_.nw; ++w)
        if (rg[r] && wg[w] && er_[r].addr / 4 == ew_[w].addr / 4) t_.same_word_rw += (er_[r].mask & ew_[w].mask).count();

    apply_writes(wg);

    // bookkeeping: granted requests leave, refused ones wait
    auto settle = [&](auto& q, bool gnt, const std::string& why) {
      if (!q.on) return;
      if (gnt) {
        q.on = false;
        return;
      }
      ++q.wait;
      t_.max_wait = std::max(t_.max_wait, q.wait);
      if (why.rfind("tensor engine", 0) == 0) ++t_.refused_by_pe;
      else ++t_.refused_by_port;
    };
    for (unsigned r = 0; r < g_.nr; ++r) settle(er_[r], rg[r], rwhy[r]);
    for (unsigned w = 0; w < g_.nw; ++w) settle(ew_[w], wg[w], wwhy[w]);

    dut_.edge();
    ++cycles_;
    ++t_.cycles;

    // read data: granted reads show the snapshot, the others hold
    for (unsigned r = 0; r < g_.nr; ++r)
      for (unsigned p = 0; p < g_.P; ++p) {
        if (!er_known_[r][p]) continue;
        const uint32_t got = static_cast<uint32_t>(get_bits(dut_->er_rdata_o, (r * g_.P + p) * 32, 32));
        if (got != er_exp_[r][p]) {
          fail("engine read port " + std::to_string(r) + " lane " + std::to_string(p) + ": data " + hex(got) +
               ", expected " + hex(er_exp_[r][p]) + (rg[r] ? " (granted this cycle)" : " (held)"));
          return false;
        }
      }
    // the words written this cycle
    const auto& mem = storage();
    for (const Touch& t : touched_)
      if (mem.word(t.p, t.w) != ref(t.p, t.w)) {
        fail("partition " + std::to_string(t.p) + " word " + std::to_string(t.w) + " after " + t.what + ": " +
             hex(mem.word(t.p, t.w)) + ", expected " + hex(ref(t.p, t.w)));
        return false;
      }
    if (!check_perf()) return false;
    if (cycles_ % (g_.P > 16 ? 1024 : 64) == 0) return check_storage();
    return true;
  }

  // Random traffic for `n` cycles in the given shape.
  bool run(const Traffic& t, uint64_t n) {
    for (uint64_t c = 0; c < n; ++c) {
      traffic_.next_pe(t, cycles_, pe_);
      traffic_.new_requests(t, pe_, er_, ew_);
      if (!cycle()) return false;
    }
    return true;
  }

  // Stops the tensor engine and new requests; every pending request must then be granted within
  // one cycle per port (port 0 of each side is granted every cycle, and so on); then the storage
  // must equal the reference.
  bool drain() {
    traffic_.stop();
    for (auto& l : pe_) l.valid = false;
    const unsigned limit = std::max(g_.nr, g_.nw);
    for (unsigned c = 0; c < limit && pending(); ++c)
      if (!cycle()) return false;
    if (pending()) {
      fail("requests still pending " + std::to_string(limit) + " cycles after the traffic stopped");
      return false;
    }
    return check_storage();
  }

  bool check_storage() {
    const auto& mem = storage();
    for (unsigned p = 0; p < g_.P; ++p)
      for (unsigned w = 0; w < g_.words; ++w)
        if (mem.word(p, w) != ref(p, w)) {
          fail("storage partition " + std::to_string(p) + " word " + std::to_string(w) + ": " + hex(mem.word(p, w)) +
               ", reference " + hex(ref(p, w)));
          return false;
        }
    return true;
  }

  bool check_perf() {
    const uint64_t rd = dut_->perf_rd_bytes_o;
    const uint64_t wr = dut_->perf_wr_bytes_o;
    if (rd != perf_rd_ || wr != perf_wr_) {
      fail("performance counters: read bytes " + std::to_string(rd) + ", write bytes " + std::to_string(wr) +
           "; granted accesses make " + std::to_string(perf_rd_) + " and " + std::to_string(perf_wr_));
      return false;
    }
    return true;
  }

  bool pending() const { return ncore::tb::any_request_on(er_, ew_); }

  // Direct access for the directed tests.
  RdReq& er(unsigned r) { return er_[r]; }
  WrReq& ew(unsigned w) { return ew_[w]; }
  PeLane& pe(unsigned p) { return pe_[p]; }
  void pe_idle() { for (auto& l : pe_) l.valid = false; }
  M& dut() { return *dut_; }
  uint32_t mem(unsigned p, unsigned w) { return storage().word(p, w); }
  // The storage through the trace interface, looked up once.
  const ncore::rtl::TracedMemory& storage() {
    if (!mem_) mem_ = &dut_.memory("ncore_psum.u_mem");
    return *mem_;
  }
  uint32_t rdata(unsigned r, unsigned p) const {
    return static_cast<uint32_t>(get_bits(dut_->er_rdata_o, (r * g_.P + p) * 32, 32));
  }
  uint64_t last_read_grants() const { return last_rg_; }
  uint64_t last_write_grants() const { return last_wg_; }
  std::mt19937_64& rng() { return rng_; }
  const Geometry& geo() const { return g_; }
  const std::string& error() const { return error_; }
  const PsumTally& tally() const { return t_; }
  void reset_max_wait() { t_.max_wait = 0; }
  uint64_t cycles() const { return cycles_; }

 private:
  struct Touch {
    unsigned p, w;
    std::string what;
  };

  uint32_t& ref(unsigned p, unsigned w) { return ref_[size_t{p} * g_.words + w]; }
  unsigned bank_of_word(uint32_t w) const { return w / g_.bank_words; }
  unsigned bank_of_addr(uint32_t a) const { return bank_of_word(a / 4); }

  // The header's arbitration, written from its words: the tensor engine holds the read and write
  // port of each (bank, partition) it writes; then reads and writes separately, lower port first:
  // a request is granted when none of its lanes is held on its bank, and then holds them.
  void reference_grants(std::vector<bool>& rg, std::vector<bool>& wg, std::vector<std::string>& rwhy,
                        std::vector<std::string>& wwhy) const {
    std::vector<Lanes> pe_held(g_.banks);
    for (unsigned p = 0; p < g_.P; ++p)
      if (pe_[p].valid) pe_held[bank_of_word(pe_[p].word)].set(p);
    auto side = [&](auto& reqs, std::vector<bool>& gnt, std::vector<std::string>& why) {
      std::vector<Lanes> held(g_.banks);
      gnt.assign(reqs.size(), false);
      why.assign(reqs.size(), "");
      for (size_t i = 0; i < reqs.size(); ++i) {
        const auto& q = reqs[i];
        if (!q.on) {
          why[i] = "no request";
          continue;
        }
        const unsigned b = bank_of_addr(q.addr);
        if ((pe_held[b] & q.mask).any()) {
          why[i] = "tensor engine writes lanes of its mask on bank " + std::to_string(b);
        } else if ((held[b] & q.mask).any()) {
          why[i] = "a lower port holds lanes of its mask on bank " + std::to_string(b);
        } else {
          gnt[i] = true;
          held[b] |= q.mask;
        }
      }
    };
    side(er_, rg, rwhy);
    side(ew_, wg, wwhy);
  }

  void tally_acc(uint32_t a, uint32_t b, uint32_t r) {
    ++t_.pe_acc;
    if (is_nan(a) || is_nan(b)) ++t_.pe_acc_nan;
    if (is_inf(a) || is_inf(b)) ++t_.pe_acc_inf;
    if (is_inf(a) && is_inf(b) && ((a ^ b) >> 31)) ++t_.pe_acc_inf_minus_inf;
    if (is_sub(a) || is_sub(b) || is_sub(r)) ++t_.pe_acc_sub;
    if (r == 0x80000000u) ++t_.pe_acc_neg_zero;
    if ((a & 0x7FFFFFFFu) == 0 && (b & 0x7FFFFFFFu) == 0 && a != b) ++t_.pe_acc_zero_signs;
  }

  // Puts pe_ (on pe_req_i, ncore_mem_pkg's lane_wr_req_t of the build's lanes) and the engine
  // requests on the ports (an idle port's fields are junk on purpose).
  void drive() {
    const MemWidths w{g_.P, 0};  // a lane write port has lanes and PSUM word addresses only
    for (unsigned p = 0; p < g_.P; ++p) {
      const PeLane& l = pe_[p];
      put_lane_wr(dut_->pe_req_i, w, p, l.valid, l.acc, l.word, l.data);
    }
    for (unsigned r = 0; r < g_.nr; ++r) {
      const RdReq& q = er_[r];
      put_bits(dut_->er_req_i, r, 1, q.on);
      put_bits(dut_->er_addr_i, r * g_.addr_w, g_.addr_w, q.addr);
      put_lanes(dut_->er_mask_i, r * g_.P, g_.P, q.mask);
    }
    for (unsigned w = 0; w < g_.nw; ++w) {
      const WrReq& q = ew_[w];
      put_bits(dut_->ew_req_i, w, 1, q.on);
      put_bits(dut_->ew_addr_i, w * g_.addr_w, g_.addr_w, q.addr);
      put_lanes(dut_->ew_mask_i, w * g_.P, g_.P, q.mask);
      put_bits(dut_->ew_ben_i, 4 * w, 4, q.ben);
      for (unsigned p = 0; p < g_.P; ++p) put_bits(dut_->ew_wdata_i, (w * g_.P + p) * 32, 32, q.data[p]);
    }
  }

  void fail(const std::string& what) {
    if (error_.empty()) error_ = g_.preset + " build, cycle " + std::to_string(cycles_) + ": " + what;
  }

  Geometry g_;
  Dut<M> dut_;
  const ncore::rtl::TracedMemory* mem_ = nullptr;
  std::mt19937_64 rng_;
  TrafficGen traffic_;
  std::vector<RdReq> er_;
  std::vector<WrReq> ew_;
  std::vector<PeLane> pe_;
  std::vector<uint32_t> ref_;
  std::vector<std::vector<uint32_t>> er_exp_;
  std::vector<Lanes> er_known_;  // lanes of each read port whose data is known
  std::vector<Touch> touched_;
  std::vector<uint32_t> last_acc_word_;
  uint64_t cycles_ = 0, perf_rd_ = 0, perf_wr_ = 0;
  uint64_t last_rg_ = 0, last_wg_ = 0;
  PsumTally t_;
  std::string error_;
};


}  // namespace psum_tb
