// The scalar-engine bench: a Verilated ncore_act_tb (engine + SBUF + PSUM) beside the golden
// model, one instruction at a time. Bench<Model> takes the tiny model (Vncore_act_tb, the random
// and directed tests) or the trn2 one (Vncore_act_tb_trn2, full width: timing and speed).
//
// run() hands the instruction over (valid/ready), clocks until done, and records what the engine
// showed on the way: clocks and engine cycles (clock enable high) from the accept edge to the
// done edge, the rd_start and done pulses, the first engine cycle with a request, requests to
// each memory. check() then executes the same instruction on the golden model and compares the
// whole SBUF and PSUM. Clock-enable modes: always high, ncore_clk_en at the preset's scalar-engine
// ratio, or random.
//
// With `noise` on (tiny model), other traffic makes the engine lose arbitration now and then:
// line reads anywhere and line writes to the last kSbufNoiseBytes of every SBUF partition on the
// SBUF's DMA ports; PSUM reads anywhere on an engine port that wins bank conflicts, and
// tensor-engine writes to the last kPsumNoiseBytes of every PSUM partition, which win over the
// engine's accesses to their banks. Instructions must stay out of the noise bytes; the noise
// writes are mirrored into the golden model as they happen.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "Vncore_act_tb.h"
#include "Vncore_act_tb___024root.h"
#include "Vncore_act_tb_trn2.h"
#include "Vncore_act_tb_trn2___024root.h"
#include "bench_bits.hpp"
#include "golden_model.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "verilated.h"

namespace act_tb {

inline const ncore::Preset& tiny() { return *ncore::find_preset("tiny"); }
inline const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

enum class CeMode { high, divider, random };
inline const char* to_string(CeMode m) {
  return m == CeMode::high ? "ce=1" : m == CeMode::divider ? "ce from ncore_clk_en" : "random ce";
}

// What one instruction did on the engine's ports.
struct RunStats {
  uint64_t clocks = 0;            // edges from the accept edge (excluded) to the done edge (included)
  uint64_t engine_cycles = 0;     // of those, edges with the clock enable high
  int64_t rd_start_cycle = -1;    // engine cycle of the rd_start pulse (its edge), -1: none
  unsigned rd_starts = 0;         // rd_start pulses
  unsigned dones = 0;             // done pulses
  int64_t first_req_cycle = -1;   // engine cycle in which the first request was made
  bool ready_while_busy = false;  // insn_ready_o high between accept and done
  bool idle_after_done = false;   // insn_ready_o high again once done has pulsed
  uint64_t psum_reads = 0, psum_writes = 0, sbuf_reads = 0, sbuf_writes = 0;  // granted
};

template <class Model>
class Bench {
 public:
  static constexpr uint64_t kHbmBytes = 4096;      // the scalar engine has no HBM operand
  static constexpr unsigned kSbufNoiseBytes = 256;  // end of every SBUF partition
  static constexpr unsigned kPsumNoiseBytes = 64;   // end of every PSUM partition

  Bench(const ncore::Preset& pr, uint64_t seed)
      : pr_(pr), ctx_(std::make_unique<VerilatedContext>()), dut_(std::make_unique<Model>(ctx_.get())),
        golden_(pr, kHbmBytes), rng_(seed) {
    P_ = static_cast<unsigned>(pr.num_partitions);
    sbuf_bytes_ = static_cast<unsigned>(pr.sbuf_bytes);
    psum_bytes_ = static_cast<unsigned>(pr.psum_bytes);
    part_w_ = log2(P_);
    line_w_ = log2(sbuf_bytes_ / 16);
    dut_->clk_i = 0;
    dut_->rst_ni = 0;
    dut_->ce_sel_i = 0;
    dut_->ce_i = 1;
    dut_->insn_valid_i = 0;
    dut_->dr_req_i = 0;
    dut_->dw_req_i = 0;
    dut_->pn_req_i = 0;
    ncore::tb::put_bits(dut_->tw_valid_i, 0, P_, 0);
    dut_->eval();
    edge();
    edge();
    dut_->rst_ni = 1;
    dut_->eval();
  }

  // Other traffic (the tiny model: up to 64 partitions).
  void set_noise(bool on) {
    noise_ = on && P_ <= 64;
    if (!on) {
      dr_on_ = dw_on_ = 0;
      pn_on_ = false;
      dut_->dr_req_i = 0;
      dut_->dw_req_i = 0;
      dut_->pn_req_i = 0;
      ncore::tb::put_bits(dut_->tw_valid_i, 0, P_, 0);
    }
  }
  uint64_t engine_refusals() const { return refusals_; }
  uint64_t psum_refusals() const { return psum_refusals_; }
  uint64_t sbuf_limit() const { return sbuf_bytes_ - kSbufNoiseBytes; }
  uint64_t psum_limit() const { return psum_bytes_ - kPsumNoiseBytes; }
  ncore::GoldenModel& golden() { return golden_; }

  // Both models get the same bytes: `sbuf` holds partition p at [p * sbuf_bytes, ...), `psum`
  // at [p * psum_bytes, ...); an empty image leaves that memory as it is.
  void load(const std::vector<uint8_t>& sbuf, const std::vector<uint8_t>& psum) {
    auto& sb = dut_->rootp->ncore_act_tb__DOT__u_sbuf__DOT__mem_q;
    auto& ps = dut_->rootp->ncore_act_tb__DOT__u_psum__DOT__mem_q;
    for (unsigned p = 0; p < P_; ++p) {
      if (!sbuf.empty()) {
        std::memcpy(&sb[p][0], sbuf.data() + size_t{p} * sbuf_bytes_, sbuf_bytes_);
        std::memcpy(golden_.sbuf(p), sbuf.data() + size_t{p} * sbuf_bytes_, sbuf_bytes_);
      }
      if (!psum.empty()) {
        std::memcpy(&ps[p][0], psum.data() + size_t{p} * psum_bytes_, psum_bytes_);
        std::memcpy(golden_.psum(p), psum.data() + size_t{p} * psum_bytes_, psum_bytes_);
      }
    }
  }

  uint32_t rtl_sbuf(unsigned p, unsigned w) const { return dut_->rootp->ncore_act_tb__DOT__u_sbuf__DOT__mem_q[p][w]; }
  uint32_t rtl_psum(unsigned p, unsigned w) const { return dut_->rootp->ncore_act_tb__DOT__u_psum__DOT__mem_q[p][w]; }

  // Runs one instruction to its done pulse (false: not accepted, or no done within `limit` clocks).
  bool run(const ncore::isa::Insn& insn, CeMode ce, RunStats& st, uint64_t limit = 200000) {
    st = RunStats{};
    ce_mode_ = ce;
    dut_->ce_sel_i = ce == CeMode::divider;
    // a few idle clocks first (random), so that the divider's phase varies
    for (unsigned k = rng_() % 4; k > 0; --k) clock();
    uint8_t img[ncore::isa::kInsnBytes];
    ncore::isa::encode(insn, img);
    for (unsigned w = 0; w < (ncore::isa::kInsnBits + 31) / 32; ++w) {
      uint32_t v;
      std::memcpy(&v, img + 4 * w, 4);
      dut_->insn_i[w] = v;
    }
    dut_->insn_valid_i = 1;
    bool accepted = false;
    clock([&] { accepted = dut_->insn_ready_o; });
    dut_->insn_valid_i = 0;
    if (!accepted) return false;  // the engine must be idle between instructions
    for (uint64_t c = 0; c < limit; ++c) {
      bool en = false;
      clock([&] {
        en = dut_->ce_o;
        if (dut_->insn_ready_o) st.ready_while_busy = true;
        if (st.first_req_cycle < 0 && (dut_->rd_req_o || dut_->wr_req_o)) st.first_req_cycle = int64_t(st.engine_cycles);
        const bool rr = dut_->rd_req_o, rg = dut_->rd_gnt_o, wr = dut_->wr_req_o, wg = dut_->wr_gnt_o;
        refusals_ += (rr && !rg) + (wr && !wg);
        psum_refusals_ += (rr && !rg && dut_->rd_psum_o) + (wr && !wg && dut_->wr_psum_o);
        if (rr && rg) ++(dut_->rd_psum_o ? st.psum_reads : st.sbuf_reads);
        if (wr && wg) ++(dut_->wr_psum_o ? st.psum_writes : st.sbuf_writes);
      });
      ++st.clocks;
      st.engine_cycles += en;
      if (dut_->rd_start_o) {
        ++st.rd_starts;
        if (st.rd_start_cycle < 0) st.rd_start_cycle = int64_t(st.engine_cycles);
      }
      if (dut_->done_o) {
        ++st.dones;
        // a few more clocks: no second done, no late rd_start
        for (int k = 0; k < 4; ++k) {
          clock();
          st.dones += dut_->done_o;
          st.rd_starts += dut_->rd_start_o;
        }
        dut_->eval();
        st.idle_after_done = dut_->insn_ready_o;
        return true;
      }
    }
    return false;
  }

  // Executes `insn` on the golden model and compares both memories. Empty string: equal.
  std::string check(const ncore::isa::Insn& insn) {
    golden_.execute(insn);
    for (int m = 0; m < 2; ++m) {
      const bool psum = m == 1;
      const unsigned words = (psum ? psum_bytes_ : sbuf_bytes_) / 4;
      for (unsigned p = 0; p < P_; ++p) {
        const uint8_t* g = psum ? golden_.psum(p) : golden_.sbuf(p);
        for (unsigned w = 0; w < words; ++w) {
          uint32_t gw;
          std::memcpy(&gw, g + 4 * w, 4);
          const uint32_t rw = psum ? rtl_psum(p, w) : rtl_sbuf(p, w);
          if (gw != rw) {
            std::ostringstream s;
            s << (psum ? "PSUM" : "SBUF") << " differs from the golden model after " << ncore::format_insn(insn)
              << "\n  first at partition " << p << " byte 0x" << std::hex << 4 * w << ": golden 0x" << gw
              << ", RTL 0x" << rw;
            return s.str();
          }
        }
      }
    }
    return {};
  }

 private:
  static unsigned log2(unsigned v) {
    unsigned n = 0;
    while ((1u << n) < v) ++n;
    return n;
  }

  void set_ce() {
    if (ce_mode_ == CeMode::random) dut_->ce_i = (rng_() % 3) != 0;
    else dut_->ce_i = 1;
  }

  // One clock: inputs (enable, other traffic), `before` on the settled pre-edge outputs, the
  // granted noise writes into the golden model, the edge.
  template <class F>
  void clock(F&& before) {
    set_ce();
    if (noise_) noise_inputs();
    dut_->eval();
    before();
    if (noise_) noise_grants();
    edge();
  }
  void clock() {
    clock([] {});
  }

  void noise_inputs() {
    using ncore::tb::put_bits;
    const unsigned lines = sbuf_bytes_ / 16, noise_lines = kSbufNoiseBytes / 16;
    for (unsigned d = 0; d < 2; ++d) {
      if (!((dr_on_ >> d) & 1) && rng_() % 5 < 3) {
        dr_on_ |= 1u << d;
        dr_[d] = {unsigned(rng_() % P_), unsigned(rng_() % lines)};
      }
      if (!((dw_on_ >> d) & 1) && rng_() % 5 < 3) {
        dw_on_ |= 1u << d;
        dw_[d] = {unsigned(rng_() % P_), unsigned(lines - noise_lines + rng_() % noise_lines)};
        dw_ben_[d] = uint16_t(rng_());
        for (unsigned w = 0; w < 4; ++w) dw_data_[d][w] = uint32_t(rng_());
      }
      put_bits(dut_->dr_part_i, d * part_w_, part_w_, dr_[d][0]);
      put_bits(dut_->dr_line_i, d * line_w_, line_w_, dr_[d][1]);
      put_bits(dut_->dw_part_i, d * part_w_, part_w_, dw_[d][0]);
      put_bits(dut_->dw_line_i, d * line_w_, line_w_, dw_[d][1]);
      put_bits(dut_->dw_ben_i, d * 16, 16, dw_ben_[d]);
      for (unsigned w = 0; w < 4; ++w) put_bits(dut_->dw_wdata_i, d * 128 + 32 * w, 32, dw_data_[d][w]);
    }
    dut_->dr_req_i = dr_on_;
    dut_->dw_req_i = dw_on_;
    // PSUM: a read held until granted, and tensor-engine writes in the noise bytes of some lanes
    if (!pn_on_ && rng_() % 5 < 2) {
      pn_on_ = true;
      put_bits(dut_->pn_addr_i, 0, log2(psum_bytes_), 4 * (rng_() % (psum_bytes_ / 4)));
      put_bits(dut_->pn_mask_i, 0, P_ < 64 ? P_ : 64, rng_());
    }
    dut_->pn_req_i = pn_on_;
    tw_valid_ = (rng_() % 4 == 0) ? rng_() & ((P_ >= 64) ? ~0ull : (1ull << P_) - 1) : 0;
    const unsigned pw = log2(psum_bytes_ / 4), noise_words = kPsumNoiseBytes / 4;
    for (unsigned p = 0; p < P_ && p < 64; ++p) {
      if (!((tw_valid_ >> p) & 1)) continue;
      tw_addr_[p] = psum_bytes_ / 4 - noise_words + unsigned(rng_() % noise_words);
      tw_data_[p] = uint32_t(rng_());
      put_bits(dut_->tw_addr_i, p * pw, pw, tw_addr_[p]);
      put_bits(dut_->tw_data_i, p * 32, 32, tw_data_[p]);
    }
    put_bits(dut_->tw_valid_i, 0, P_ < 64 ? P_ : 64, tw_valid_);
  }

  void noise_grants() {
    const uint32_t rg = dut_->dr_gnt_o & dr_on_, wg = dut_->dw_gnt_o & dw_on_;
    for (unsigned d = 0; d < 2; ++d) {
      if ((rg >> d) & 1) dr_on_ &= ~(1u << d);
      if (!((wg >> d) & 1)) continue;
      dw_on_ &= ~(1u << d);
      uint8_t* line = golden_.sbuf(dw_[d][0]) + 16 * dw_[d][1];
      for (unsigned b = 0; b < 16; ++b)
        if ((dw_ben_[d] >> b) & 1) line[b] = uint8_t(dw_data_[d][b / 4] >> (8 * (b % 4)));
    }
    if (pn_on_ && dut_->pn_gnt_o) pn_on_ = false;
    // tensor-engine writes are always taken
    for (unsigned p = 0; p < P_ && p < 64; ++p)
      if ((tw_valid_ >> p) & 1) std::memcpy(golden_.psum(p) + 4 * tw_addr_[p], &tw_data_[p], 4);
  }

  void edge() {
    dut_->clk_i = 1;
    dut_->eval();
    dut_->clk_i = 0;
    dut_->eval();
  }

  const ncore::Preset& pr_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Model> dut_;
  ncore::GoldenModel golden_;
  std::mt19937_64 rng_;
  CeMode ce_mode_ = CeMode::high;
  unsigned P_ = 0, sbuf_bytes_ = 0, psum_bytes_ = 0, part_w_ = 0, line_w_ = 0;
  bool noise_ = false, pn_on_ = false;
  uint32_t dr_on_ = 0, dw_on_ = 0;                      // SBUF noise requests pending, per DMA port
  std::array<std::array<unsigned, 2>, 2> dr_{}, dw_{};  // [port] = {partition, line}
  std::array<uint16_t, 2> dw_ben_{};
  std::array<std::array<uint32_t, 4>, 2> dw_data_{};
  uint64_t tw_valid_ = 0;                              // PSUM tensor-engine writes this cycle, per lane
  std::array<unsigned, 64> tw_addr_{};
  std::array<uint32_t, 64> tw_data_{};
  uint64_t refusals_ = 0, psum_refusals_ = 0;
};

using TinyBench = Bench<Vncore_act_tb>;
using Trn2Bench = Bench<Vncore_act_tb_trn2>;

}  // namespace act_tb
