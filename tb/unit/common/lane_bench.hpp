// The lane-engine bench: a Verilated ncore_lane_tb (the vector or the scalar engine with an SBUF
// and a PSUM) beside the golden model, one instruction at a time. LaneBench<Model> takes any
// build of the wrapper: the vector engine's (tb/unit/dve) or the scalar engine's, tiny or trn2
// (tb/unit/act).
//
// run() hands the instruction over (valid/ready), clocks until done, and records what the engine
// showed on the way: clocks and engine cycles (clock enable high) from the accept edge to the
// done edge, the rd_start and done pulses, the first engine cycle with a request, requests to
// each memory. check() then executes the same instruction on the golden model and compares the
// whole SBUF and PSUM. Clock-enable modes: always high, ncore_clk_en at the preset's ratio for
// the engine, or random.
//
// Other traffic (set_noise, tiny model) makes the engine lose arbitration now and then: on the
// SBUF, line reads anywhere and line writes to the last kSbufNoiseBytes of every partition on its
// DMA ports (SbufDmaNoise); on the PSUM, reads anywhere on an engine port that wins bank
// conflicts, and tensor-engine writes to the last kPsumNoiseBytes of every partition, which win
// over the engine's accesses to their banks. Instructions must stay out of the noise bytes; the
// noise writes are mirrored into the golden model as they happen.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_bits.hpp"
#include "bench_dut.hpp"
#include "golden_model.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "sbuf_noise.hpp"

namespace ncore::tb {

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
class LaneBench {
 public:
  static constexpr uint64_t kHbmBytes = 4096;      // the lane engines have no HBM operand
  static constexpr unsigned kSbufNoiseBytes = 256;  // end of every SBUF partition
  static constexpr unsigned kPsumNoiseBytes = 64;   // end of every PSUM partition

  LaneBench(const ncore::Preset& pr, uint64_t seed)
      : pr_(pr), golden_(pr, kHbmBytes), rng_(seed),
        sbuf_noise_(rng_, unsigned(pr.num_partitions), unsigned(pr.sbuf_bytes), kSbufNoiseBytes, 3) {
    P_ = static_cast<unsigned>(pr.num_partitions);
    sbuf_bytes_ = static_cast<unsigned>(pr.sbuf_bytes);
    psum_bytes_ = static_cast<unsigned>(pr.psum_bytes);
    dut_->ce_i = 1;
    set_zero(dut_->ce_sel_i, dut_->insn_valid_i, dut_->dr_req_i, dut_->dw_req_i, dut_->pn_req_i);
    put_bits(dut_->tw_valid_i, 0, P_, 0);
    dut_.reset();
  }

  // Other traffic on the SBUF's DMA ports, on the PSUM (the tiny model: up to 64 partitions).
  void set_noise(bool sbuf, bool psum) {
    sbuf_noise_on_ = sbuf && P_ <= 64;
    psum_noise_on_ = psum && P_ <= 64;
    if (!sbuf) sbuf_noise_.stop(*dut_);
    if (!psum) {
      pn_on_ = false;
      dut_->pn_req_i = 0;
      put_bits(dut_->tw_valid_i, 0, P_, 0);
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
    const auto& sb = sbuf_mem();
    const auto& ps = psum_mem();
    for (unsigned p = 0; p < P_; ++p) {
      if (!sbuf.empty()) {
        std::memcpy(sb.row(p), sbuf.data() + size_t{p} * sbuf_bytes_, sbuf_bytes_);
        std::memcpy(golden_.sbuf(p), sbuf.data() + size_t{p} * sbuf_bytes_, sbuf_bytes_);
      }
      if (!psum.empty()) {
        std::memcpy(ps.row(p), psum.data() + size_t{p} * psum_bytes_, psum_bytes_);
        std::memcpy(golden_.psum(p), psum.data() + size_t{p} * psum_bytes_, psum_bytes_);
      }
    }
  }

  uint32_t rtl_sbuf(unsigned p, unsigned w) { return sbuf_mem().word(p, w); }
  uint32_t rtl_psum(unsigned p, unsigned w) { return psum_mem().word(p, w); }
  // The memories' storage through the trace interface, looked up once.
  const ncore::rtl::TracedMemory& sbuf_mem() {
    if (!sbuf_mem_) sbuf_mem_ = &dut_.memory("ncore_lane_tb.u_sbuf.u_mem");
    return *sbuf_mem_;
  }
  const ncore::rtl::TracedMemory& psum_mem() {
    if (!psum_mem_) psum_mem_ = &dut_.memory("ncore_lane_tb.u_psum.u_mem");
    return *psum_mem_;
  }

  // Runs one instruction to its done pulse (false: not accepted, or no done within `limit` clocks).
  bool run(const ncore::isa::Insn& insn, CeMode ce, RunStats& st, uint64_t limit = 200000) {
    st = RunStats{};
    ce_mode_ = ce;
    dut_->ce_sel_i = ce == CeMode::divider;
    // a few idle clocks first (random), so that the divider's phase varies
    for (unsigned k = rng_() % 4; k > 0; --k) clock();
    put_insn(*dut_, insn);
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
    if (sbuf_noise_on_) sbuf_noise_.drive(*dut_);
    if (psum_noise_on_) psum_noise_inputs();
    dut_->eval();
    before();
    if (sbuf_noise_on_) sbuf_noise_.retire(*dut_, golden_);
    if (psum_noise_on_) psum_noise_grants();
    dut_.edge();
  }
  void clock() {
    clock([] {});
  }

  // PSUM: a read held until granted, and tensor-engine writes in the noise bytes of some lanes
  void psum_noise_inputs() {
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

  void psum_noise_grants() {
    if (pn_on_ && dut_->pn_gnt_o) pn_on_ = false;
    // tensor-engine writes are always taken
    for (unsigned p = 0; p < P_ && p < 64; ++p)
      if ((tw_valid_ >> p) & 1) std::memcpy(golden_.psum(p) + 4 * tw_addr_[p], &tw_data_[p], 4);
  }

  const ncore::Preset& pr_;
  Dut<Model> dut_;
  const ncore::rtl::TracedMemory* sbuf_mem_ = nullptr;
  const ncore::rtl::TracedMemory* psum_mem_ = nullptr;
  ncore::GoldenModel golden_;
  std::mt19937_64 rng_;
  SbufDmaNoise sbuf_noise_;
  CeMode ce_mode_ = CeMode::high;
  unsigned P_ = 0, sbuf_bytes_ = 0, psum_bytes_ = 0;
  bool sbuf_noise_on_ = false, psum_noise_on_ = false, pn_on_ = false;
  uint64_t tw_valid_ = 0;                              // PSUM tensor-engine writes this cycle, per lane
  std::array<unsigned, 64> tw_addr_{};
  std::array<uint32_t, 64> tw_data_{};
  uint64_t refusals_ = 0, psum_refusals_ = 0;
};

}  // namespace ncore::tb
