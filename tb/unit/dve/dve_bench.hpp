// The vector-engine bench: the Verilated ncore_dve_tb (engine + SBUF, tiny preset) beside the
// golden model, one instruction at a time.
//
// run() hands the instruction over (valid/ready), clocks until done, and records what the
// engine showed on the way: clocks and engine cycles (clock-enable high) from the accept edge
// to the done edge, the rd_start and done pulses, the first engine cycle with an SBUF request.
// check() then executes the same instruction on the golden model and compares the whole SBUF.
// Clock-enable modes: always high, ncore_clk_en at the preset's vector-engine ratio, or random.
// With `noise` on, the SBUF's DMA ports carry other traffic that makes the engine lose
// arbitration now and then: line reads anywhere, line writes to the last kNoiseBytes of every
// partition (instructions must stay out of there), mirrored into the golden model as granted.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "Vncore_dve_tb.h"
#include "Vncore_dve_tb___024root.h"
#include "golden_model.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "verilated.h"

namespace dve_tb {

inline const ncore::Preset& tiny() { return *ncore::find_preset("tiny"); }

enum class CeMode { high, divider, random };
inline const char* to_string(CeMode m) {
  return m == CeMode::high ? "ce=1" : m == CeMode::divider ? "ce from ncore_clk_en" : "random ce";
}

// What one instruction did on the engine's ports.
struct RunStats {
  uint64_t clocks = 0;          // edges from the accept edge (excluded) to the done edge (included)
  uint64_t engine_cycles = 0;   // of those, edges with the clock enable high
  int64_t rd_start_cycle = -1;  // engine cycle of the rd_start pulse (its edge), -1: none
  unsigned rd_starts = 0;       // rd_start pulses
  unsigned dones = 0;           // done pulses (exactly one: the run ends at it, more are counted after)
  int64_t first_req_cycle = -1; // engine cycle in which the first SBUF request was made
  bool ready_while_busy = false;  // insn_ready_o high between accept and done
  bool idle_after_done = false;   // insn_ready_o high again once done has pulsed
  bool psum_access = false;       // a request went to the PSUM (the bench uses SBUF only)
};

class Bench {
 public:
  static constexpr uint64_t kHbmBytes = 4096;  // the vector engine has no HBM operand
  static constexpr unsigned kNoiseBytes = 256;  // end of every partition: only the noise writes there

  explicit Bench(uint64_t seed)
      : ctx_(std::make_unique<VerilatedContext>()), dut_(std::make_unique<Vncore_dve_tb>(ctx_.get())),
        golden_(tiny(), kHbmBytes), rng_(seed) {
    P_ = static_cast<unsigned>(tiny().num_partitions);
    bytes_ = static_cast<unsigned>(tiny().sbuf_bytes);
    dut_->clk_i = 0;
    dut_->rst_ni = 0;
    dut_->ce_sel_i = 0;
    dut_->ce_i = 1;
    dut_->insn_valid_i = 0;
    dut_->dr_req_i = 0;
    dut_->dw_req_i = 0;
    dut_->eval();
    edge();
    edge();
    dut_->rst_ni = 1;
    dut_->eval();
  }

  void set_noise(bool on) {
    noise_ = on;
    if (!on) {
      dr_on_ = dw_on_ = 0;
      dut_->dr_req_i = 0;
      dut_->dw_req_i = 0;
    }
  }
  uint64_t noise_grants() const { return noise_grants_; }
  uint64_t engine_refusals() const { return refusals_; }

  ncore::GoldenModel& golden() { return golden_; }

  // Both memories get the same bytes: `image` holds partition p at [p * sbuf_bytes, ...).
  void load_sbuf(const std::vector<uint8_t>& image) {
    auto& mem = dut_->rootp->ncore_dve_tb__DOT__u_sbuf__DOT__mem_q;
    for (unsigned p = 0; p < P_; ++p) {
      std::memcpy(&mem[p][0], image.data() + size_t{p} * bytes_, bytes_);
      std::memcpy(golden_.sbuf(p), image.data() + size_t{p} * bytes_, bytes_);
    }
  }

  uint32_t rtl_word(unsigned p, unsigned w) const {
    return dut_->rootp->ncore_dve_tb__DOT__u_sbuf__DOT__mem_q[p][w];
  }

  // Runs one instruction to its done pulse (false: no done within `limit` clocks).
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
    // after the accept edge: clock to the done pulse
    for (uint64_t c = 0; c < limit; ++c) {
      bool en = false;
      clock([&] {
        en = dut_->ce_o;
        if (dut_->insn_ready_o) st.ready_while_busy = true;
        if (st.first_req_cycle < 0 && (dut_->rd_req_o || dut_->wr_req_o)) st.first_req_cycle = int64_t(st.engine_cycles);
        refusals_ += (dut_->rd_req_o && !dut_->rd_gnt_o) + (dut_->wr_req_o && !dut_->wr_gnt_o);
        if ((dut_->rd_req_o && dut_->rd_psum_o) || (dut_->wr_req_o && dut_->wr_psum_o)) st.psum_access = true;
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

  // Executes `insn` on the golden model and compares the whole SBUF. Empty string: equal.
  std::string check(const ncore::isa::Insn& insn) {
    golden_.execute(insn);
    for (unsigned p = 0; p < P_; ++p) {
      const uint8_t* g = golden_.sbuf(p);
      for (unsigned w = 0; w < bytes_ / 4; ++w) {
        uint32_t gw;
        std::memcpy(&gw, g + 4 * w, 4);
        const uint32_t rw = rtl_word(p, w);
        if (gw != rw) {
          std::ostringstream s;
          s << "SBUF differs from the golden model after " << ncore::format_insn(insn) << "\n  first at partition "
            << p << " byte 0x" << std::hex << 4 * w << ": golden 0x" << gw << ", RTL 0x" << rw;
          return s.str();
        }
      }
    }
    return {};
  }

 private:
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
    const unsigned lines = bytes_ / 16, noise_lines = kNoiseBytes / 16;
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
    }
    dut_->dr_req_i = dr_on_;
    dut_->dw_req_i = dw_on_;
    dut_->dr_part_i = uint8_t(dr_[0][0] | dr_[1][0] << 4);
    dut_->dr_line_i = uint16_t(dr_[0][1] | dr_[1][1] << 8);
    dut_->dw_part_i = uint8_t(dw_[0][0] | dw_[1][0] << 4);
    dut_->dw_line_i = uint16_t(dw_[0][1] | dw_[1][1] << 8);
    dut_->dw_ben_i = uint32_t(dw_ben_[0]) | uint32_t(dw_ben_[1]) << 16;
    for (unsigned d = 0; d < 2; ++d)
      for (unsigned w = 0; w < 4; ++w) dut_->dw_wdata_i[4 * d + w] = dw_data_[d][w];
  }

  void noise_grants() {
    const uint32_t rg = dut_->dr_gnt_o & dr_on_, wg = dut_->dw_gnt_o & dw_on_;
    for (unsigned d = 0; d < 2; ++d) {
      if ((rg >> d) & 1) {
        dr_on_ &= ~(1u << d);
        ++noise_grants_;
      }
      if (!((wg >> d) & 1)) continue;
      dw_on_ &= ~(1u << d);
      ++noise_grants_;
      uint8_t* line = golden_.sbuf(dw_[d][0]) + 16 * dw_[d][1];
      for (unsigned b = 0; b < 16; ++b)
        if ((dw_ben_[d] >> b) & 1) line[b] = uint8_t(dw_data_[d][b / 4] >> (8 * (b % 4)));
    }
  }
  void edge() {
    dut_->clk_i = 1;
    dut_->eval();
    dut_->clk_i = 0;
    dut_->eval();
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vncore_dve_tb> dut_;
  ncore::GoldenModel golden_;
  std::mt19937_64 rng_;
  CeMode ce_mode_ = CeMode::high;
  unsigned P_ = 0, bytes_ = 0;
  bool noise_ = false;
  uint32_t dr_on_ = 0, dw_on_ = 0;  // noise requests pending, per DMA port
  std::array<std::array<unsigned, 2>, 2> dr_{}, dw_{};  // [port] = {partition, line}
  std::array<uint16_t, 2> dw_ben_{};
  std::array<std::array<uint32_t, 4>, 2> dw_data_{};
  uint64_t noise_grants_ = 0, refusals_ = 0;
};

}  // namespace dve_tb
