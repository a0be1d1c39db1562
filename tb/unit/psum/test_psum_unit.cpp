// PSUM unit bench: rtl/ncore_psum.sv through the wrapper ncore_psum_tb, built on the tiny preset
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
//
// Directed tests: accumulate on hand-computed special cases, three accumulates in a row to one
// word, the tensor engine's priority, lower port wins, a read and a write of one word in one
// cycle, byte enables and 2-byte elements.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "Vncore_psum_tb_tiny.h"
#include "Vncore_psum_tb_tiny___024root.h"
#include "Vncore_psum_tb_trn2.h"
#include "Vncore_psum_tb_trn2___024root.h"
#include "bench_bits.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "numerics.hpp"
#include "verilated.h"

namespace {

using namespace ncore::tb;
namespace num = ncore::num;

constexpr unsigned kMaxP = 128;
using Lanes = std::bitset<kMaxP>;

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

unsigned log2u(uint64_t v) {
  unsigned n = 0;
  while ((uint64_t{1} << n) < v) ++n;
  return n;
}

// The numbers of one build, from the generated preset header (the RTL takes the same ones from
// ncore_cfg_pkg), and its port counts (the wrapper's -G parameters in CMakeLists.txt).
struct Geometry {
  std::string preset;
  unsigned P, words, bank_words, banks, addr_w, word_w, nr, nw;
};

Geometry geometry(const char* preset, unsigned nr, unsigned nw) {
  const ncore::Preset& p = *ncore::find_preset(preset);
  Geometry g;
  g.preset = preset;
  g.P = static_cast<unsigned>(p.num_partitions);
  g.words = static_cast<unsigned>(p.psum_bytes / 4);
  g.bank_words = static_cast<unsigned>(p.psum_bank_bytes / 4);
  g.banks = g.words / g.bank_words;
  g.addr_w = log2u(p.psum_bytes);
  g.word_w = g.addr_w - 2;
  g.nr = nr;
  g.nw = nw;
  if (g.P > kMaxP || nr > 64 || nw > 64) throw std::runtime_error("psum bench: more lanes or ports than it holds");
  return g;
}

// ---- lane sets on Verilated ports --------------------------------------------------------------
template <class T>
void put_lanes(T& port, unsigned lsb, unsigned n, const Lanes& l) {
  for (unsigned i = 0; i < n; i += 64) {
    const unsigned w = std::min(64u, n - i);
    uint64_t v = 0;
    for (unsigned k = 0; k < w; ++k)
      if (l[i + k]) v |= uint64_t{1} << k;
    put_bits(port, lsb + i, w, v);
  }
}

template <class T>
Lanes get_lanes(const T& port, unsigned lsb, unsigned n) {
  Lanes l;
  for (unsigned i = 0; i < n; i += 64) {
    const unsigned w = std::min(64u, n - i);
    const uint64_t v = get_bits(port, lsb + i, w);
    for (unsigned k = 0; k < w; ++k)
      if ((v >> k) & 1) l.set(i + k);
  }
  return l;
}

// ---- values --------------------------------------------------------------------------------------
// Zeros of both signs, infinities, NaNs (quiet and signalling, both signs, payloads), the
// smallest and largest subnormals, the smallest normals, the largest finite values, and values
// whose sums are rounding ties or cancel.
constexpr uint32_t kSpecial[] = {
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF,
    0x7FC00001, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF,
    0xFF7FFFFF, 0x73000000, 0x3F800000, 0xBF800000, 0x3F800001, 0x33800000, 0x34400000, 0x00400000,
};

uint32_t special_f32(std::mt19937_64& rng) { return kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])]; }

// The reference of one accumulate: the golden numerics' fp32 add (host binary32 arithmetic).
uint32_t ref_add(uint32_t old, uint32_t data) { return num::alu(ncore::isa::AluOp::add, old, data); }

bool is_nan(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }
bool is_inf(uint32_t b) { return (b & 0x7FFFFFFFu) == 0x7F800000u; }
bool is_sub(uint32_t b) { return (b & 0x7F800000u) == 0 && (b & 0x007FFFFFu) != 0; }

// ---- requests ------------------------------------------------------------------------------------
struct RdReq {
  bool on = false;
  uint32_t addr = 0;  // byte address
  Lanes mask;
  uint64_t wait = 0;
};
struct WrReq {
  bool on = false;
  uint32_t addr = 0;  // byte address: the element lands at byte addr % 4 of the word
  Lanes mask;
  uint8_t ben = 0;
  std::vector<uint32_t> data;  // per lane, the element in the low bits
  uint64_t wait = 0;
};
struct TeLane {
  bool valid = false;
  uint32_t word = 0;
  uint32_t data = 0;
  bool acc = false;
};

// One result of the PE array: partitions q..q+m-1, n words from `base` (within one bank);
// partition q+i writes word j at cycle start + i + j.
struct Stream {
  uint64_t start;
  unsigned q, m;
  uint32_t base;
  unsigned n;
  bool acc;
};

enum class TeMode { none, streams, lanes };

// Traffic shape of a phase.
struct Traffic {
  const char* name;
  TeMode te;
  double te_rate;    // streams: chance per cycle that the next result starts, once the last has;
                     // lanes: chance that a lane writes in a cycle
  unsigned te_words; // lanes: 0 = anywhere, else only this many words of the hot bank
  double p_req;      // a free engine port starts a new request
  double p_hot;      // the request aims at the hot spot (follow_te: where the TE writes now)
  bool follow_te;
  unsigned hot_bank, hot_part;
  bool special;      // values from kSpecial only
};

// What the traffic met, for the report and the coverage checks.
struct Tally {
  uint64_t cycles = 0, te_writes = 0, te_acc = 0, te_acc_nan = 0, te_acc_inf = 0, te_acc_inf_minus_inf = 0,
           te_acc_sub = 0, te_acc_neg_zero = 0, te_acc_zero_signs = 0, te_acc_same_word_next_cycle = 0;
  uint64_t rd_grants = 0, wr_grants = 0, refused_by_te = 0, refused_by_port = 0, same_word_rw = 0;
  uint64_t max_wait = 0;
};

// ---- the bench ---------------------------------------------------------------------------------
template <class M>
class Bench {
 public:
  Bench(const Geometry& g, uint64_t seed)
      : g_(g), ctx_(std::make_unique<VerilatedContext>()), dut_(std::make_unique<M>(ctx_.get())), rng_(seed),
        er_(g.nr), ew_(g.nw), te_(g.P), ref_(size_t{g.P} * g.words), er_exp_(g.nr, std::vector<uint32_t>(g.P, 0)),
        er_known_(g.nr), lane_free_(g.P, 0), last_acc_word_(g.P, ~0u) {
    for (auto& w : ew_) w.data.assign(g_.P, 0);
    // Random fp32 patterns, the same in the storage and the reference.
    auto& mem = dut_->rootp->ncore_psum_tb__DOT__u_psum__DOT__mem_q;
    for (unsigned p = 0; p < g_.P; ++p)
      for (unsigned w = 0; w < g_.words; ++w) {
        const uint32_t v = random_f32(rng_);
        mem[p][w] = v;
        ref(p, w) = v;
      }
    dut_->clk_i = 0;
    dut_->rst_ni = 0;
    drive();
    dut_->eval();
    edge();
    edge();
    dut_->rst_ni = 1;
    dut_->eval();
    check_perf();
  }

  // ---- one cycle --------------------------------------------------------------------------------
  // Drives the tensor-engine lanes in te_ and the pending engine requests, checks the grants,
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

    // the writes, into the reference; `touched` lists the words to compare after the edge
    touched_.clear();
    std::vector<std::string> what;
    for (unsigned p = 0; p < g_.P; ++p) {
      const TeLane& l = te_[p];
      if (!l.valid) {
        last_acc_word_[p] = ~0u;
        continue;
      }
      uint32_t& word = ref(p, l.word);
      const uint32_t old = word;
      if (l.acc) {
        word = ref_add(old, l.data);
        tally_acc(old, l.data, word);
        if (last_acc_word_[p] == l.word) ++t_.te_acc_same_word_next_cycle;
        last_acc_word_[p] = l.word;
      } else {
        word = l.data;
        last_acc_word_[p] = ~0u;
      }
      ++t_.te_writes;
      perf_wr_ += 4;
      touched_.push_back({p, l.word, "tensor-engine " + std::string(l.acc ? "accumulate " : "overwrite ") + hex(old) +
                                         (l.acc ? " + " : " <- ") + hex(l.data)});
    }
    for (unsigned w = 0; w < g_.nw; ++w) {
      if (!wg[w]) continue;
      const WrReq& q = ew_[w];
      const unsigned sh = q.addr % 4;
      for (unsigned p = 0; p < g_.P; ++p) {
        if (!q.mask[p]) continue;
        uint32_t& word = ref(p, q.addr / 4);
        const uint32_t old = word;
        // the element sits in the low bytes of the lane's data and lands at byte `sh`
        for (unsigned j = sh; j < 4; ++j)
          if ((q.ben >> (j - sh)) & 1) set_byte(word, j, static_cast<uint8_t>(q.data[p] >> (8 * (j - sh))));
        touched_.push_back({p, q.addr / 4, "engine write port " + std::to_string(w) + " byte " + hex(q.addr) +
                                               " ben " + hex(q.ben) + " data " + hex(q.data[p]) + " on " + hex(old)});
      }
      perf_wr_ += q.mask.count() * static_cast<uint64_t>(__builtin_popcount(q.ben));
      ++t_.wr_grants;
    }

    // bookkeeping: granted requests leave, refused ones wait
    auto settle = [&](auto& q, bool gnt, const std::string& why) {
      if (!q.on) return;
      if (gnt) {
        q.on = false;
        return;
      }
      ++q.wait;
      t_.max_wait = std::max(t_.max_wait, q.wait);
      if (why.rfind("tensor engine", 0) == 0) ++t_.refused_by_te;
      else ++t_.refused_by_port;
    };
    for (unsigned r = 0; r < g_.nr; ++r) settle(er_[r], rg[r], rwhy[r]);
    for (unsigned w = 0; w < g_.nw; ++w) settle(ew_[w], wg[w], wwhy[w]);

    edge();
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
    const auto& mem = dut_->rootp->ncore_psum_tb__DOT__u_psum__DOT__mem_q;
    for (const Touch& t : touched_)
      if (mem[t.p][t.w] != ref(t.p, t.w)) {
        fail("partition " + std::to_string(t.p) + " word " + std::to_string(t.w) + " after " + t.what + ": " +
             hex(mem[t.p][t.w]) + ", expected " + hex(ref(t.p, t.w)));
        return false;
      }
    if (!check_perf()) return false;
    if (cycles_ % (g_.P > 16 ? 1024 : 64) == 0) return check_storage();
    return true;
  }

  // Random traffic for `n` cycles in the given shape.
  bool run(const Traffic& t, uint64_t n) {
    for (uint64_t c = 0; c < n; ++c) {
      next_te(t);
      new_requests(t);
      if (!cycle()) return false;
    }
    return true;
  }

  // Stops the tensor engine and new requests; every pending request must then be granted within
  // one cycle per port (port 0 of each side is granted every cycle, and so on); then the storage
  // must equal the reference.
  bool drain() {
    streams_.clear();
    std::fill(lane_free_.begin(), lane_free_.end(), 0);
    for (auto& l : te_) l.valid = false;
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
    const auto& mem = dut_->rootp->ncore_psum_tb__DOT__u_psum__DOT__mem_q;
    for (unsigned p = 0; p < g_.P; ++p)
      for (unsigned w = 0; w < g_.words; ++w)
        if (mem[p][w] != ref(p, w)) {
          fail("storage partition " + std::to_string(p) + " word " + std::to_string(w) + ": " + hex(mem[p][w]) +
               ", reference " + hex(ref(p, w)));
          return false;
        }
    return true;
  }

  bool check_perf() {
    const uint64_t rd = dut_->rootp->ncore_psum_tb__DOT__u_psum__DOT__perf_rd_bytes_q;
    const uint64_t wr = dut_->rootp->ncore_psum_tb__DOT__u_psum__DOT__perf_wr_bytes_q;
    if (rd != perf_rd_ || wr != perf_wr_) {
      fail("performance counters: read bytes " + std::to_string(rd) + ", write bytes " + std::to_string(wr) +
           "; granted accesses make " + std::to_string(perf_rd_) + " and " + std::to_string(perf_wr_));
      return false;
    }
    return true;
  }

  bool pending() const {
    for (const auto& q : er_) if (q.on) return true;
    for (const auto& q : ew_) if (q.on) return true;
    return false;
  }

  // Direct access for the directed tests.
  RdReq& er(unsigned r) { return er_[r]; }
  WrReq& ew(unsigned w) { return ew_[w]; }
  TeLane& te(unsigned p) { return te_[p]; }
  void te_idle() { for (auto& l : te_) l.valid = false; }
  M& dut() { return *dut_; }
  uint32_t mem(unsigned p, unsigned w) const { return dut_->rootp->ncore_psum_tb__DOT__u_psum__DOT__mem_q[p][w]; }
  uint32_t rdata(unsigned r, unsigned p) const {
    return static_cast<uint32_t>(get_bits(dut_->er_rdata_o, (r * g_.P + p) * 32, 32));
  }
  uint64_t last_read_grants() const { return last_rg_; }
  uint64_t last_write_grants() const { return last_wg_; }
  std::mt19937_64& rng() { return rng_; }
  const Geometry& geo() const { return g_; }
  const std::string& error() const { return error_; }
  const Tally& tally() const { return t_; }
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

  static void set_byte(uint32_t& w, unsigned j, uint8_t b) { w = (w & ~(0xFFu << (8 * j))) | (uint32_t{b} << (8 * j)); }

  // The header's arbitration, written from its words: the tensor engine holds the read and write
  // port of each (bank, partition) it writes; then reads and writes separately, lower port first:
  // a request is granted when none of its lanes is held on its bank, and then holds them.
  void reference_grants(std::vector<bool>& rg, std::vector<bool>& wg, std::vector<std::string>& rwhy,
                        std::vector<std::string>& wwhy) const {
    std::vector<Lanes> te_held(g_.banks);
    for (unsigned p = 0; p < g_.P; ++p)
      if (te_[p].valid) te_held[bank_of_word(te_[p].word)].set(p);
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
        if ((te_held[b] & q.mask).any()) {
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
    ++t_.te_acc;
    if (is_nan(a) || is_nan(b)) ++t_.te_acc_nan;
    if (is_inf(a) || is_inf(b)) ++t_.te_acc_inf;
    if (is_inf(a) && is_inf(b) && ((a ^ b) >> 31)) ++t_.te_acc_inf_minus_inf;
    if (is_sub(a) || is_sub(b) || is_sub(r)) ++t_.te_acc_sub;
    if (r == 0x80000000u) ++t_.te_acc_neg_zero;
    if ((a & 0x7FFFFFFFu) == 0 && (b & 0x7FFFFFFFu) == 0 && a != b) ++t_.te_acc_zero_signs;
  }

  void edge() {
    dut_->clk_i = 1;
    dut_->eval();
    dut_->clk_i = 0;
    dut_->eval();
  }

  // Puts te_ and the engine requests on the ports (an idle port's fields are junk on purpose).
  void drive() {
    Lanes valid, acc;
    for (unsigned p = 0; p < g_.P; ++p) {
      const TeLane& l = te_[p];
      valid[p] = l.valid;
      acc[p] = l.acc;
      put_bits(dut_->te_addr_i, p * g_.word_w, g_.word_w, l.word);
      put_bits(dut_->te_data_i, p * 32, 32, l.data);
    }
    put_lanes(dut_->te_valid_i, 0, g_.P, valid);
    put_lanes(dut_->te_acc_i, 0, g_.P, acc);
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

  uint32_t value(const Traffic& t) { return t.special ? special_f32(rng_) : random_f32(rng_); }

  // The tensor engine's lanes for the next cycle.
  void next_te(const Traffic& t) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& l : te_) l.valid = false;
    if (t.te == TeMode::lanes) {
      for (unsigned p = 0; p < g_.P; ++p) {
        TeLane& l = te_[p];
        if (u(rng_) >= t.te_rate) continue;
        l.valid = true;
        l.word = t.te_words ? t.hot_bank * g_.bank_words + static_cast<uint32_t>(rng_() % t.te_words)
                            : static_cast<uint32_t>(rng_() % g_.words);
        l.acc = rng_() % 4 != 0;
        l.data = value(t);
      }
      te_bank_ = t.te_words ? t.hot_bank : static_cast<unsigned>(rng_() % g_.banks);
      return;
    }
    if (t.te != TeMode::streams) return;
    // start the next stream when the last one has started (the array streams back to back), or
    // after a gap
    const uint64_t now = cycles_;
    if ((streams_.empty() || streams_.back().start <= now) && u(rng_) < t.te_rate) add_stream(t, now);
    for (const Stream& s : streams_) {
      if (s.start > now) continue;
      for (unsigned i = 0; i < s.m; ++i) {
        const uint64_t at = s.start + i;
        if (now < at || now >= at + s.n) continue;
        TeLane& l = te_[s.q + i];
        l.valid = true;
        l.word = s.base + static_cast<uint32_t>(now - at);
        l.acc = s.acc;
        l.data = value(t);
      }
    }
    streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                  [&](const Stream& s) { return s.start + s.m - 1 + s.n <= now + 1; }),
                   streams_.end());
    if (!streams_.empty()) te_bank_ = bank_of_word(streams_.front().base);
  }

  // A new result: the same region as the last one (accumulation group) or a new one; it starts
  // no earlier than `at` and late enough that no partition gets two words in one cycle.
  void add_stream(const Traffic& t, uint64_t at) {
    Stream s;
    if (group_left_ > 0) {
      s = group_;
      s.acc = true;
      --group_left_;
    } else {
      s.m = 1 + static_cast<unsigned>(rng_() % g_.P);
      s.q = static_cast<unsigned>(rng_() % (g_.P - s.m + 1));
      s.n = 1 + static_cast<unsigned>(rng_() % (rng_() % 2 ? g_.bank_words : std::min(g_.bank_words, 24u)));
      const unsigned bank = static_cast<unsigned>(rng_() % g_.banks);
      s.base = bank * g_.bank_words + static_cast<uint32_t>(rng_() % (g_.bank_words - s.n + 1));
      s.acc = t.special ? false : rng_() % 4 == 0;
      group_ = s;
      group_left_ = static_cast<unsigned>(rng_() % 4);
    }
    uint64_t start = at;
    for (unsigned i = 0; i < s.m; ++i) start = std::max(start, lane_free_[s.q + i] > i ? lane_free_[s.q + i] - i : 0);
    s.start = start;
    for (unsigned i = 0; i < s.m; ++i) lane_free_[s.q + i] = s.start + i + s.n;
    streams_.push_back(s);
  }

  void new_requests(const Traffic& t) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    auto hot = [&] { return u(rng_) < t.p_hot; };
    const unsigned hb = t.follow_te ? te_bank_ : t.hot_bank;
    // a word: on the hot spot, one of the first four words of the hot bank; else anywhere
    auto word_in = [&](bool h) {
      return h ? hb * g_.bank_words + static_cast<uint32_t>(rng_() % 4) : static_cast<uint32_t>(rng_() % g_.words);
    };
    auto lanes = [&](bool h) {
      Lanes m;
      switch (rng_() % 8) {
        case 0: case 1: for (unsigned p = 0; p < g_.P; ++p) m.set(p); break;
        case 2: case 3: m.set(rng_() % g_.P); break;
        case 4: {  // a range
          const unsigned a = static_cast<unsigned>(rng_() % g_.P), b = static_cast<unsigned>(rng_() % g_.P);
          for (unsigned p = std::min(a, b); p <= std::max(a, b); ++p) m.set(p);
          break;
        }
        case 5: break;  // no lane at all: granted at once (nothing can hold it)
        default: for (unsigned p = 0; p < g_.P; ++p) if (rng_() % 2) m.set(p); break;
      }
      if (h) {
        if (t.follow_te) {  // the lanes the tensor engine writes now
          for (unsigned p = 0; p < g_.P; ++p) if (te_[p].valid && rng_() % 2) m.set(p);
        } else {
          m.set(t.hot_part);
        }
      }
      return m;
    };
    for (auto& q : er_)
      if (!q.on && u(rng_) < t.p_req) {
        const bool h = hot();
        q.on = true;
        q.wait = 0;
        q.addr = word_in(h) * 4 + static_cast<uint32_t>(rng_() % 2) * 2;  // 2-byte aligned
        q.mask = lanes(h);
      }
    for (auto& q : ew_)
      if (!q.on && u(rng_) < t.p_req) {
        const bool h = hot();
        q.on = true;
        q.wait = 0;
        const uint32_t word = word_in(h);
        switch (rng_() % 4) {
          case 0:  // 2-byte element at byte 0 or 2 (upper data bits are junk and must not land)
          case 1:
            q.addr = word * 4 + static_cast<uint32_t>(rng_() % 2) * 2;
            q.ben = (rng_() % 4 == 0) ? static_cast<uint8_t>(1 + rng_() % 3) : 0x3;
            for (auto& d : q.data) d = static_cast<uint32_t>(rng_());
            break;
          case 2:  // 4-byte element: an fp32 value the tensor engine may accumulate onto
            q.addr = word * 4;
            q.ben = 0xF;
            for (auto& d : q.data) d = value(t);
            break;
          default:  // 4-byte word, any byte enables
            q.addr = word * 4;
            q.ben = static_cast<uint8_t>(rng_() % 16);
            for (auto& d : q.data) d = static_cast<uint32_t>(rng_());
            break;
        }
        q.mask = lanes(h);
      }
  }

  void fail(const std::string& what) {
    if (error_.empty()) error_ = g_.preset + " build, cycle " + std::to_string(cycles_) + ": " + what;
  }

  Geometry g_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<M> dut_;
  std::mt19937_64 rng_;
  std::vector<RdReq> er_;
  std::vector<WrReq> ew_;
  std::vector<TeLane> te_;
  std::vector<uint32_t> ref_;
  std::vector<std::vector<uint32_t>> er_exp_;
  std::vector<Lanes> er_known_;  // lanes of each read port whose data is known
  std::vector<Touch> touched_;
  std::vector<Stream> streams_;
  std::vector<uint64_t> lane_free_;  // first cycle a partition is free of the streams so far
  std::vector<uint32_t> last_acc_word_;
  Stream group_{};
  unsigned group_left_ = 0;
  unsigned te_bank_ = 0;
  uint64_t cycles_ = 0, perf_rd_ = 0, perf_wr_ = 0;
  uint64_t last_rg_ = 0, last_wg_ = 0;
  Tally t_;
  std::string error_;
};

// The phases of a random run.
std::vector<Traffic> phases(const Geometry& g) {
  const unsigned hp = g.P / 3;
  return {
      {"results streamed, engines anywhere", TeMode::streams, 0.8, 0, 0.6, 0.0, false, 0, 0, false},
      {"results streamed, engines on the banks and lanes being written", TeMode::streams, 0.8, 0, 0.7, 0.7, true, 0, 0, false},
      {"random lanes, engines on bank 1", TeMode::lanes, 0.4, 0, 0.7, 0.6, false, 1, hp, false},
      {"accumulation groups of special values, engines on the lanes being written", TeMode::streams, 0.9, 0, 0.5, 0.4, true, 0, 0, true},
      {"random lanes on 6 words of bank 2, special values", TeMode::lanes, 0.7, 6, 0.6, 0.5, false, 2, hp, true},
      {"no tensor engine, engines at full rate on bank 0", TeMode::none, 0.0, 0, 1.0, 0.7, false, 0, hp, false},
      {"everything at full rate", TeMode::lanes, 1.0, 0, 1.0, 0.5, false, 3 % g.banks, hp, false},
  };
}

std::string tally_report(const Tally& t) {
  std::ostringstream s;
  s << t.cycles << " cycles; tensor engine: " << t.te_writes << " words written, " << t.te_acc << " accumulated ("
    << t.te_acc_nan << " with a NaN, " << t.te_acc_inf << " with an infinity, " << t.te_acc_inf_minus_inf
    << " inf - inf, " << t.te_acc_sub << " with a subnormal operand or sum, " << t.te_acc_zero_signs
    << " +0 + -0, " << t.te_acc_neg_zero << " summing to -0, " << t.te_acc_same_word_next_cycle
    << " onto the word the lane accumulated the cycle before); engine ports: " << t.rd_grants << " reads and "
    << t.wr_grants << " writes granted, " << t.refused_by_te << " refusals for the tensor engine, " << t.refused_by_port
    << " for a lower port, " << t.same_word_rw << " lanes read and written in one cycle";
  return s.str();
}

template <class M>
void random_run(const Geometry& g, uint64_t cycles, uint64_t seed) {
  REQUIRE(num::host_float_is_ieee());
  Bench<M> b(g, seed);
  const auto ph = phases(g);
  std::string waits;
  for (const Traffic& t : ph) {
    INFO("seed " << seed << ", phase: " << t.name);
    b.reset_max_wait();
    const bool ok = b.run(t, cycles / ph.size()) && b.drain();
    INFO(b.error());
    REQUIRE(ok);
    waits += "\n  " + std::string(t.name) + ": " + std::to_string(b.tally().max_wait);
  }
  const Tally& t = b.tally();
  // (Refusals have no bound: the tensor engine always wins, and writing every lane every cycle
  // it shuts the engine ports out for as long as it does.)
  WARN("psum " << g.preset << ", " << g.nr << " read + " << g.nw << " write engine ports: " << tally_report(t)
               << "; longest wait of a request (cycles) by phase:" << waits);
  // the traffic met every case it is meant to
  CHECK(t.te_acc > t.te_writes / 4);
  CHECK(t.te_acc_nan > 0);
  CHECK(t.te_acc_inf_minus_inf > 0);
  CHECK(t.te_acc_sub > 0);
  CHECK(t.te_acc_zero_signs > 0);
  CHECK(t.te_acc_neg_zero > 0);
  CHECK(t.te_acc_same_word_next_cycle > 0);
  CHECK(t.refused_by_te > 0);
  if (g.nr > 1 || g.nw > 1) CHECK(t.refused_by_port > 0);
  CHECK(t.same_word_rw > 0);
}

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
    (bench).te_idle();                      \
    const bool drain_ok_ = (bench).drain(); \
    INFO((bench).error());                  \
    REQUIRE(drain_ok_);                     \
  } while (0)

uint64_t env_count(const char* name, uint64_t dflt) {
  const char* s = std::getenv(name);
  return s && *s ? std::strtoull(s, nullptr, 0) : dflt;
}

const Geometry& tiny_geo() {
  static const Geometry g = geometry("tiny", 3, 2);
  return g;
}
const Geometry& trn2_geo() {
  static const Geometry g = geometry("trn2", 1, 1);
  return g;
}

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

TEST_CASE("PSUM random traffic, tiny preset, 3 read and 2 write engine ports", "[psum]") {
  random_run<Vncore_psum_tb_tiny>(tiny_geo(), 210000, 1);
}

TEST_CASE("PSUM random traffic, trn2 preset, 1 read and 1 write engine port", "[psum]") {
  random_run<Vncore_psum_tb_trn2>(trn2_geo(), 21000, 2);
}

TEST_CASE("PSUM random traffic, long run", "[psum][.long]") {
  const uint64_t n = env_count("NCORE_PSUM_LONG_CYCLES", 2000000);
  random_run<Vncore_psum_tb_tiny>(tiny_geo(), n, 11);
  random_run<Vncore_psum_tb_trn2>(trn2_geo(), n / 10, 12);
}

TEST_CASE("PSUM accumulate: hand-computed special cases", "[psum]") {
  REQUIRE(num::host_float_is_ieee());
  Bench<Vncore_psum_tb_tiny> b(tiny_geo(), 3);
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
    b.te_idle();
    for (unsigned k = k0; k < std::min(n, k0 + P); ++k) b.te(k - k0) = TeLane{true, 64 + 5 + k, cases[k].old, false};
    STEP(b);
    for (unsigned k = k0; k < std::min(n, k0 + P); ++k) {
      INFO(cases[k].what);
      CHECK(b.mem(k - k0, 64 + 5 + k) == cases[k].old);  // an overwrite keeps the bits, NaN payloads too
      b.te(k - k0) = TeLane{true, 64 + 5 + k, cases[k].add, true};
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
  Bench<Vncore_psum_tb_tiny> b(tiny_geo(), 4);
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
  for (unsigned p = 0; p < 3; ++p) b.te(p) = TeLane{true, 200, first[p], false};
  STEP(b);
  for (unsigned c = 0; c < 3; ++c) {
    for (unsigned p = 0; p < 3; ++p) b.te(p) = TeLane{true, 200, adds[p][c], true};
    STEP(b);
    for (unsigned p = 0; p < 3; ++p) {
      INFO("lane " << p << ", accumulate " << c);
      CHECK(b.mem(p, 200) == after[p][c]);
    }
  }
  DRAIN(b);
}

TEST_CASE("PSUM tensor engine has priority: refused engine accesses wait and have no effect", "[psum]") {
  Bench<Vncore_psum_tb_tiny> b(tiny_geo(), 5);
  // The tensor engine accumulates into word 70 (bank 1) of partitions 4 and 5 for 3 cycles.
  // Read port 0 (word 100, bank 1, lanes 5-6) and write port 0 (word 127, bank 1, lane 4) need
  // those (bank, partition) pairs: refused, although they are the lowest ports. Read port 1 (bank
  // 1, lanes 0-3) and write port 1 (bank 1, lane 6) do not: granted, every cycle.
  const uint32_t before_w = b.mem(4, 127);
  for (unsigned c = 0; c < 3; ++c) {
    b.te(4) = TeLane{true, 70, 0x3F800000, true};
    b.te(5) = TeLane{true, 70, 0x3F800000, true};
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
  b.te_idle();
  b.te(4) = TeLane{true, 130, 0x40000000, false};
  STEP(b);
  CHECK(b.last_read_grants() == 0b001);  // read port 1 was granted before and asked no more
  CHECK(b.last_write_grants() == 0b01);
  CHECK(b.mem(4, 127) == 0xDEADBEEFu);
  CHECK(b.rdata(0, 5) == b.mem(5, 100));
  // A read of the very word the tensor engine writes, on its lane, is refused too (the engine
  // holds the bank's read port): a TE write and an engine read never meet on one word.
  b.te_idle();
  b.te(7) = TeLane{true, 10, 0x3F800000, false};
  b.er(0) = read_req(10 * 4, 0x80);
  b.er(2) = read_req(10 * 4, 0x100);  // the same word on partition 8: granted
  STEP(b);
  CHECK(b.last_read_grants() == 0b100);
  DRAIN(b);
}

TEST_CASE("PSUM among engine ports the lower port number wins", "[psum]") {
  Bench<Vncore_psum_tb_tiny> b(tiny_geo(), 6);
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
  Bench<Vncore_psum_tb_tiny> b(tiny_geo(), 7);
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
  Bench<Vncore_psum_tb_tiny> b(tiny_geo(), 8);
  auto write = [&](uint32_t addr, uint64_t mask, uint8_t ben, uint32_t data) {
    b.ew(0) = write_req(addr, mask, ben, data);
    STEP(b);
    REQUIRE(b.last_write_grants() == 0b01);
  };
  const unsigned w = 150;
  write(4 * w, 0x0030, 0xF, 0x11223344u);      // partitions 4, 5: whole word
  write(4 * w + 2, 0x0010, 0x3, 0xDEADAAAAu);  // partition 4: element at byte 2, junk above
  write(4 * w, 0x0010, 0x3, 0xBEEFBBBBu);      // partition 4: element at byte 0
  write(4 * w, 0x0020, 0x4, 0x00CC0000u);      // partition 5: byte 2 alone
  write(4 * w + 2, 0x0020, 0x2, 0x0000DD00u);  // partition 5: byte 1 of an element at byte 2
  CHECK(b.mem(4, w) == 0xAAAABBBBu);
  CHECK(b.mem(5, w) == 0xDDCC3344u);
  // read back at byte 2 (the word holding the element)
  b.er(1) = read_req(4 * w + 2, 0x0030);
  STEP(b);
  CHECK(b.rdata(1, 4) == 0xAAAABBBBu);
  CHECK(b.rdata(1, 5) == 0xDDCC3344u);
  // the tensor engine accumulates onto what the engine wrote: 0x3F800000 + 0x3F800000 = 2
  write(4 * w + 2, 0x0001, 0x3, 0x00003F80u);
  write(4 * w, 0x0001, 0x3, 0x00000000u);
  b.te(0) = TeLane{true, w, 0x3F800000u, true};
  STEP(b);
  CHECK(b.mem(0, w) == 0x40000000u);
  DRAIN(b);
}
