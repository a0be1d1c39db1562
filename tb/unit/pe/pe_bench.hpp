// The tensor-engine bench: the Verilated ncore_pe_tb (engine + SBUF + PSUM, tiny preset) beside
// the golden model, driven by a model of the tensor engine's sequencer.
//
// run() plays a program: it presents each instruction for one cycle when the engine's ready bit
// for its kind is high and the previous one has been accepted (with random gaps when asked),
// records every pulse the engine gives (accept, start, done) by cycle, and at every mm_done
// pulse checks the PSUM against the golden model run up to that multiply. Later multiplies may
// already be writing (the array overlaps them), so the words of multiplies presented after the
// one that is done are left out of that comparison; every other word, in every partition and
// bank, must be equal. When the program is done and the engine idle, the whole PSUM must be
// equal. The bench also checks, every cycle:
//   - pulses come in program order within their kind and never outrun what was accepted;
//   - busy_o is high whenever an instruction is held, started or not yet done, and when it is
//     low the engine makes no SBUF request and no PSUM write;
//   - no PSUM lane is written outside the result of a multiply in flight.
// Other traffic (set_noise): line reads and writes on the SBUF's DMA ports (writes to the last
// kSbufNoiseBytes of every partition, which no operand uses, mirrored into the golden model),
// and reads and writes on the PSUM's engine ports (reads anywhere; writes to the last
// kPsumNoiseWords words of every bank, which no result uses, mirrored too) that lose to the
// engine's PSUM writes on their banks and make its SBUF reads wait.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "Vncore_pe_tb.h"
#include "Vncore_pe_tb___024root.h"
#include "bench_bits.hpp"
#include "bench_dut.hpp"
#include "golden_model.hpp"
#include "ncore/ap.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "sbuf_noise.hpp"

namespace pe_tb {

using ncore::tb::tiny;

// What one program did on the engine's ports, by cycle (0 = the first cycle of run()).
struct RunLog {
  std::vector<uint64_t> present;           // per instruction: cycle it was presented
  std::vector<uint64_t> accept;            // accept_o pulses
  std::vector<uint64_t> ls_start, mm_start, ls_done, mm_done;
  std::vector<uint64_t> mv_reads;          // granted moving-operand reads
  std::vector<uint64_t> st_reads;          // granted stationary-operand reads
  uint64_t cycles = 0;                     // until idle after the last done
  uint64_t psum_compares = 0;              // words compared with the golden model
  uint64_t noise_refusals = 0;             // PSUM engine-port accesses refused
  uint64_t pe_stalls = 0;                  // engine SBUF requests not granted
};

class Bench {
 public:
  static constexpr uint64_t kHbmBytes = 4096;
  static constexpr unsigned kSbufNoiseBytes = 256;  // end of every SBUF partition
  static constexpr unsigned kPsumNoiseWords = 4;    // end of every PSUM bank

  explicit Bench(uint64_t seed)
      : golden_(tiny(), kHbmBytes), rng_(seed),
        sbuf_noise_(rng_, unsigned(tiny().num_partitions), unsigned(tiny().sbuf_bytes), kSbufNoiseBytes, 2) {
    P_ = static_cast<unsigned>(tiny().num_partitions);
    sbuf_bytes_ = static_cast<unsigned>(tiny().sbuf_bytes);
    psum_words_ = static_cast<unsigned>(tiny().psum_bytes / 4);
    bank_words_ = static_cast<unsigned>(tiny().psum_bank_bytes / 4);
    ncore::tb::set_zero(dut_->insn_valid_i, dut_->dr_req_i, dut_->dw_req_i, dut_->per_req_i, dut_->pew_req_i);
    dut_.reset();
  }

  ncore::GoldenModel& golden() { return golden_; }
  std::mt19937_64& rng() { return rng_; }
  uint64_t sbuf_limit() const { return sbuf_bytes_ - kSbufNoiseBytes; }

  void set_noise(bool on) { noise_ = on; }
  void set_gaps(bool on) { gaps_ = on; }

  // Random contents for both memories, the same in the RTL and the golden model.
  void randomize_memories() {
    const auto& sb = dut_.memory("ncore_pe_tb.u_sbuf.u_mem");
    const auto& ps = psum_mem();
    for (unsigned p = 0; p < P_; ++p) {
      const std::vector<uint8_t> img = ncore::tb::random_bytes(rng_, sbuf_bytes_);
      std::memcpy(sb.row(p), img.data(), sbuf_bytes_);
      std::memcpy(golden_.sbuf(p), img.data(), sbuf_bytes_);
      for (unsigned w = 0; w < psum_words_; ++w) {
        const uint32_t v = ncore::tb::random_f32(rng_);
        ps.row(p)[w] = v;
        std::memcpy(golden_.psum(p) + 4 * w, &v, 4);
      }
    }
  }

  uint32_t rtl_psum(unsigned p, unsigned w) { return psum_mem().word(p, w); }
  // The PSUM's storage through the trace interface, looked up once.
  const ncore::rtl::TracedMemory& psum_mem() {
    if (!psum_mem_) psum_mem_ = &dut_.memory("ncore_pe_tb.u_psum.u_mem");
    return *psum_mem_;
  }
  uint32_t golden_psum(unsigned p, unsigned w) const {
    uint32_t v;
    std::memcpy(&v, golden_.psum(p) + 4 * w, 4);
    return v;
  }

  // Plays `prog` to the end. Empty string: every check passed.
  std::string run(const std::vector<ncore::isa::Insn>& prog, RunLog& log, uint64_t limit = 2000000) {
    log = RunLog{};
    log.present.assign(prog.size(), 0);
    std::vector<size_t> ls_idx, mm_idx;
    for (size_t i = 0; i < prog.size(); ++i)
      (prog[i].opcode == ncore::isa::Opcode::load_stationary ? ls_idx : mm_idx).push_back(i);
    size_t next = 0, golden_pos = 0;
    bool waiting = false;
    unsigned gap = 0;
    size_t n_acc = 0, n_acc_ls = 0, n_acc_mm = 0;
    uint64_t idle_since = 0;
    std::vector<char> is_ls_acc;  // kind of each accepted instruction, in order
    for (uint64_t c = 0; c < limit; ++c) {
      // --- inputs: the sequencer and other traffic
      dut_->insn_valid_i = 0;
      if (!waiting && next < prog.size()) {
        if (gap > 0) {
          --gap;
        } else {
          const bool ls = prog[next].opcode == ncore::isa::Opcode::load_stationary;
          if (ls ? dut_->ls_ready_o : dut_->mm_ready_o) {
            ncore::tb::put_insn(*dut_, prog[next]);
            log.present[next] = c;
            ++next;
            waiting = true;
            if (gaps_ && rng_() % 4 == 0) gap = static_cast<unsigned>(rng_() % 40);
          }
        }
      }
      if (noise_) noise_inputs();
      dut_->eval();
      // --- outputs in this cycle
      if (dut_->accept_o) {
        if (!waiting) return "accept_o without an instruction waiting";
        waiting = false;
        log.accept.push_back(c);
        is_ls_acc.push_back(prog[next - 1].opcode == ncore::isa::Opcode::load_stationary);
        ++n_acc;
        (is_ls_acc.back() ? n_acc_ls : n_acc_mm)++;
      }
      if (dut_->ls_start_o) log.ls_start.push_back(c);
      if (dut_->mm_start_o) log.mm_start.push_back(c);
      if (dut_->ls_done_o) log.ls_done.push_back(c);
      if (dut_->sr_req_o && dut_->sr_gnt_o) log.st_reads.push_back(c);
      if (dut_->mr_req_o && dut_->mr_gnt_o) log.mv_reads.push_back(c);
      log.pe_stalls += (dut_->sr_req_o && !dut_->sr_gnt_o) + (dut_->mr_req_o && !dut_->mr_gnt_o);
      if (log.ls_start.size() > n_acc_ls || log.ls_done.size() > log.ls_start.size())
        return fail(c, "a load_stationary start or done pulse without its instruction");
      if (log.mm_start.size() > n_acc_mm) return fail(c, "a multiply_moving start pulse without its instruction");
      // PSUM writes only inside the results of multiplies presented and not yet done
      if (dut_->pw_valid_o) {
        const std::string e = check_lanes(prog, mm_idx, log.mm_done.size(), next);
        if (!e.empty()) return fail(c, e);
      }
      if (dut_->mm_done_o) {
        const size_t d = log.mm_done.size();
        if (d >= mm_idx.size() || d >= log.mm_start.size()) return fail(c, "mm_done_o without a multiply in flight");
        log.mm_done.push_back(c);
        for (; golden_pos <= mm_idx[d]; ++golden_pos) golden_.execute(prog[golden_pos]);
        const std::string e = compare_psum(prog, mm_idx, d, next, log);
        if (!e.empty()) return fail(c, "after multiply #" + std::to_string(d) + " (" +
                                           ncore::format_insn(prog[mm_idx[d]]) + "): " + e);
      }
      const bool all_done = next == prog.size() && !waiting && log.mm_done.size() == mm_idx.size() &&
                            log.ls_done.size() == ls_idx.size();
      // (An instruction presented in this cycle is the engine's input, not yet its work.)
      const bool presented_now = dut_->insn_valid_i;
      const bool owes = (waiting && !presented_now) || log.ls_done.size() < n_acc_ls || log.mm_done.size() < n_acc_mm;
      if (owes && !dut_->busy_o) return fail(c, "busy_o low while an instruction is held or not done");
      if (!dut_->busy_o && (dut_->sr_req_o || dut_->mr_req_o || dut_->pw_valid_o))
        return fail(c, "busy_o low while the engine reads the SBUF or writes the PSUM");
      if (noise_) noise_grants(log);
      dut_.edge();
      if (all_done && !dut_->busy_o) {
        if (++idle_since > 8) {
          log.cycles = c + 1;
          break;
        }
      } else {
        idle_since = 0;
      }
      if (c + 1 == limit) return fail(c, "the program did not finish");
    }
    if (log.ls_start.size() != ls_idx.size() || log.mm_start.size() != mm_idx.size())
      return "start pulses: " + std::to_string(log.ls_start.size()) + " loads, " +
             std::to_string(log.mm_start.size()) + " multiplies; expected " + std::to_string(ls_idx.size()) + ", " +
             std::to_string(mm_idx.size());
    for (; golden_pos < prog.size(); ++golden_pos) golden_.execute(prog[golden_pos]);
    return compare_psum(prog, mm_idx, mm_idx.size(), prog.size(), log);
  }

 private:
  std::string fail(uint64_t c, const std::string& what) const {
    return "cycle " + std::to_string(c) + ": " + what;
  }

  // Words of multiply `i`'s result: marks [p * psum_words + w].
  void mark(const ncore::isa::Insn& i, std::vector<char>& m) const {
    const unsigned w0 = static_cast<unsigned>(i.dst.offset / 4), n = static_cast<unsigned>(ncore::ap_free_elems(i.dst));
    for (unsigned p = i.dst.start_part; p < i.dst.start_part + i.dst.num_part; ++p)
      for (unsigned w = w0; w < w0 + n; ++w) m[size_t{p} * psum_words_ + w] = 1;
  }

  // The whole PSUM against the golden model, except the results of multiplies after #done
  // that were presented (program index < next): they may be part-written.
  std::string compare_psum(const std::vector<ncore::isa::Insn>& prog, const std::vector<size_t>& mm_idx, size_t done,
                           size_t next, RunLog& log) {
    std::vector<char> skip(size_t{P_} * psum_words_, 0);
    for (size_t d = done + 1; d < mm_idx.size() && mm_idx[d] < next; ++d) mark(prog[mm_idx[d]], skip);
    for (unsigned p = 0; p < P_; ++p)
      for (unsigned w = 0; w < psum_words_; ++w) {
        if (skip[size_t{p} * psum_words_ + w]) continue;
        ++log.psum_compares;
        const uint32_t g = golden_psum(p, w), r = rtl_psum(p, w);
        if (g != r) {
          std::ostringstream s;
          s << "PSUM differs from the golden model at partition " << p << " word " << w << " (byte 0x" << std::hex
            << 4 * w << "): golden 0x" << g << ", RTL 0x" << r;
          return s.str();
        }
      }
    return {};
  }

  // Every PSUM lane written now belongs to a multiply in flight (done .. next-1) that covers it.
  std::string check_lanes(const std::vector<ncore::isa::Insn>& prog, const std::vector<size_t>& mm_idx, size_t done,
                          size_t next) const {
    const uint32_t pw = dut_->pw_valid_o;
    for (unsigned p = 0; p < P_; ++p) {
      if (!((pw >> p) & 1)) continue;
      bool ok = false;
      for (size_t d = done; d < mm_idx.size() && mm_idx[d] < next && !ok; ++d) {
        const auto& a = prog[mm_idx[d]].dst;
        ok = p >= a.start_part && p < a.start_part + a.num_part;
      }
      if (!ok) return "PSUM partition " + std::to_string(p) + " written outside every multiply in flight";
    }
    return {};
  }

  // ---- other traffic -----------------------------------------------------------------------
  void noise_inputs() {
    sbuf_noise_.drive(*dut_);
    // PSUM engine ports: a request stays until it is granted, as an engine's would
    const unsigned banks = psum_words_ / bank_words_;
    if (!per_on_ && rng_() % 3 == 0) {
      per_on_ = true;
      per_addr_ = 4 * unsigned(rng_() % psum_words_);
      per_mask_ = uint16_t(rng_() | 1);
    }
    if (!pew_on_ && rng_() % 3 == 0) {
      pew_on_ = true;
      const unsigned bank = unsigned(rng_() % banks);
      const unsigned word = bank * bank_words_ + bank_words_ - kPsumNoiseWords + unsigned(rng_() % kPsumNoiseWords);
      const unsigned kind = unsigned(rng_() % 3);  // fp32, low half, high half
      pew_addr_ = 4 * word + (kind == 2 ? 2 : 0);
      pew_ben_ = kind == 0 ? 0xF : 0x3;
      pew_mask_ = uint16_t(rng_() | 1);
      for (unsigned p = 0; p < 16; ++p) pew_data_[p] = uint32_t(rng_());
    }
    dut_->per_req_i = per_on_;
    dut_->per_addr_i = uint16_t(per_addr_);
    dut_->per_mask_i = per_mask_;
    dut_->pew_req_i = pew_on_;
    dut_->pew_addr_i = uint16_t(pew_addr_);
    dut_->pew_mask_i = pew_mask_;
    dut_->pew_ben_i = pew_ben_;
    for (unsigned p = 0; p < 16; ++p) dut_->pew_wdata_i[p] = pew_data_[p];
  }

  void noise_grants(RunLog& log) {
    sbuf_noise_.retire(*dut_, golden_);
    if (per_on_) {
      if (dut_->per_gnt_o) per_on_ = false;
      else ++log.noise_refusals;
    }
    if (pew_on_) {
      if (dut_->pew_gnt_o) {
        pew_on_ = false;
        const unsigned sh = pew_addr_ & 3, w = pew_addr_ / 4;
        for (unsigned p = 0; p < P_; ++p) {
          if (!((pew_mask_ >> p) & 1)) continue;
          uint8_t* e = golden_.psum(p) + 4 * w;
          for (unsigned b = 0; b < 4; ++b)
            if (((pew_ben_ << sh) >> b) & 1) e[b] = uint8_t((pew_data_[p] << (8 * sh)) >> (8 * b));
        }
      } else {
        ++log.noise_refusals;
      }
    }
  }

  ncore::tb::Dut<Vncore_pe_tb> dut_;
  const ncore::rtl::TracedMemory* psum_mem_ = nullptr;
  ncore::GoldenModel golden_;
  std::mt19937_64 rng_;
  ncore::tb::SbufDmaNoise sbuf_noise_;
  unsigned P_ = 0, sbuf_bytes_ = 0, psum_words_ = 0, bank_words_ = 0;
  bool noise_ = false, gaps_ = false;
  bool per_on_ = false, pew_on_ = false;
  unsigned per_addr_ = 0, pew_addr_ = 0;
  uint16_t per_mask_ = 0, pew_mask_ = 0;
  uint8_t pew_ben_ = 0;
  std::array<uint32_t, 16> pew_data_{};
};

}  // namespace pe_tb
