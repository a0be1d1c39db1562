// SystemC top level of one preset: the Verilated ncore_top, its clock, the sequencers and
// the HBM model. Included by one .cpp per Verilated model, with T a traits struct naming that
// model's class (T::Model), its DMA engine and queue counts and its thread count.
//
// One SC_THREAD runs the clock. Every cycle it
//   1. drives the inputs for the cycle from what the RTL showed after the last edge: the
//      next instruction of each sequencer whose semaphore wait holds, DMA transfers whose
//      fixed cost has elapsed, HBM acceptances, read data and acknowledgements;
//   2. raises the clock (Verilator evaluates the edge with those inputs);
//   3. reads the outputs: done and read-start pulses fire semaphore updates.
// When the RTL reports no engine busy and no sequencer, queue or HBM transfer can act before
// a known future cycle, the thread waits until then without clocking (a whole number of the
// clock enables' common period, so their phase is unchanged) and counts the skipped cycles.
#pragma once

#include <systemc.h>
#include <verilated_fst_c.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/core_sim.hpp"
#include "golden_model.hpp"
#include "core/hbm_model.hpp"
#include "ncore/ap.hpp"
#include "ncore/error.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/validate.hpp"

namespace ncore::sim {

namespace detail {

// Packs an encoded instruction into the sc_bv the Verilated port takes.
template <int N>
void to_bv(const isa::Insn& insn, sc_bv<N>& bv) {
  uint8_t bytes[isa::kInsnBytes];
  isa::encode(insn, bytes);
  for (int w = 0; w < (N + 31) / 32; ++w) {
    uint32_t word;
    std::memcpy(&word, bytes + 4 * w, 4);
    bv.set_word(w, word);
  }
}

inline uint64_t bv_bits(const sc_bv_base& bv, unsigned lsb, unsigned width) {
  uint64_t v = 0;
  for (unsigned i = 0; i < width; i += 32) {
    const unsigned bit = lsb + i;
    const unsigned w = bit / 32, sh = bit % 32;
    uint64_t chunk = bv.get_word(static_cast<int>(w)) >> sh;
    if (sh && w + 1 < static_cast<unsigned>(bv.size())) chunk |= static_cast<uint64_t>(bv.get_word(static_cast<int>(w + 1))) << (32 - sh);
    v |= (chunk & 0xffffffffull) << i;
  }
  return width >= 64 ? v : v & ((1ull << width) - 1);
}

inline uint64_t lcm_u64(uint64_t a, uint64_t b) { return a / std::gcd(a, b) * b; }

// The instruction port of an engine that runs one instruction at a time.
struct SingleEngine {
  SingleEngine(StreamKind k, const char* name, const char* w)
      : kind(k),
        what(w),
        valid((std::string(name) + "_valid").c_str()),
        ready((std::string(name) + "_ready").c_str()),
        rd_start((std::string(name) + "_rd_start").c_str()),
        done((std::string(name) + "_done").c_str()),
        insn((std::string(name) + "_insn").c_str()) {}
  StreamKind kind;
  const char* what;
  sc_signal<bool> valid, ready, rd_start, done;
  sc_signal<sc_bv<isa::kInsnBits>> insn;
  sc_bv<isa::kInsnBits> bv;
};

}  // namespace detail

template <class T>
class ScCore : public sc_module, public Core {
 public:
  // `rtl` is the Verilated core, made by the caller as a top-level SystemC module (so that its
  // trace scopes are named from its own name, without this module's prefix).
  ScCore(sc_module_name name, const Preset& preset, typename T::Model* rtl)
      : sc_module(name),
        rtl_(rtl),
        preset_(preset),
        E_(static_cast<unsigned>(preset.dma_engines)),
        Q_(static_cast<unsigned>(preset.dma_queues)),
        hbm_model_(preset, static_cast<unsigned>(preset.dma_engines)) {
    rtl_->clk_i(clk_);
    rtl_->rst_ni(rst_n_);
    rtl_->dve_valid_i(dve_.valid);
    rtl_->dve_insn_i(dve_.insn);
    rtl_->dve_ready_o(dve_.ready);
    rtl_->dve_rd_start_o(dve_.rd_start);
    rtl_->dve_done_o(dve_.done);
    rtl_->act_valid_i(act_.valid);
    rtl_->act_insn_i(act_.insn);
    rtl_->act_ready_o(act_.ready);
    rtl_->act_rd_start_o(act_.rd_start);
    rtl_->act_done_o(act_.done);
    rtl_->pe_valid_i(pe_valid_);
    rtl_->pe_insn_i(pe_insn_);
    rtl_->pe_ls_ready_o(pe_ls_ready_);
    rtl_->pe_mm_ready_o(pe_mm_ready_);
    rtl_->pe_accept_o(pe_accept_);
    rtl_->pe_ls_start_o(pe_ls_start_);
    rtl_->pe_mm_start_o(pe_mm_start_);
    rtl_->pe_ls_done_o(pe_ls_done_);
    rtl_->pe_mm_done_o(pe_mm_done_);
    rtl_->dma_valid_i(dma_valid_);
    rtl_->dma_insn_i(dma_insn_);
    rtl_->dma_q_free_o(dma_q_free_);
    rtl_->dma_rd_start_o(dma_rd_start_);
    rtl_->dma_done_o(dma_done_);
    rtl_->hq_valid_o(hq_valid_);
    rtl_->hq_credit_i(hq_credit_);
    rtl_->hq_we_o(hq_we_);
    rtl_->hq_line_o(hq_line_);
    rtl_->hq_ben_o(hq_ben_);
    rtl_->hq_wdata_o(hq_wdata_);
    rtl_->hr_valid_i(hr_valid_);
    rtl_->hr_rdata_i(hr_rdata_);
    rtl_->ha_valid_i(ha_valid_);
    rtl_->busy_o(busy_);
    rtl_->ce_o(ce_);
    period_ = detail::lcm_u64(detail::lcm_u64(preset.dve_ce_den, preset.dma_ce_den), preset.act_ce_den);
    SC_THREAD(thread);
  }
  SC_HAS_PROCESS(ScCore);

  const Preset& preset() const override { return preset_; }
  unsigned threads() const override { return T::kThreads; }

  uint32_t sbuf_word(unsigned p, uint64_t word) const override {
    return rtl_->rootp->ncore_top__DOT__u_sbuf__DOT__mem_q[p][word];
  }

  uint32_t psum_word(unsigned p, uint64_t word) const override {
    return rtl_->rootp->ncore_top__DOT__u_psum__DOT__mem_q[p][word];
  }

  RunResult run(const Program& prog, std::vector<uint8_t>& hbm, const RunOptions& opt) override {
    if (prog.preset != preset_.name)
      throw SimError(fmt::format("the program was traced for preset '{}' but is run on '{}'", prog.preset, preset_.name));
    if (hbm.size() != prog.hbm_bytes)
      throw SimError(fmt::format("HBM image holds {} bytes, the program needs {}", hbm.size(), prog.hbm_bytes));
    if (prog.streams.size() != kNumEngineStreams + Q_)
      throw SimError(fmt::format("the program has {} streams; preset {} needs {} (5 engines + {} DMA queues)",
                                 prog.streams.size(), preset_.name, kNumEngineStreams + Q_, Q_));
    validate_program(prog, preset_);
    for (unsigned s = 0; s < kNumEngineStreams; ++s)
      if (s != static_cast<unsigned>(StreamKind::dve) && s != static_cast<unsigned>(StreamKind::sp) &&
          s != static_cast<unsigned>(StreamKind::pe) && s != static_cast<unsigned>(StreamKind::act))
        for (const auto& in : prog.streams[s].insns)
          if (in.insn.opcode != isa::Opcode::sem_wait)
            throw SimError(fmt::format("stream {} holds '{}', but this model has no {} engine yet", prog.streams[s].name,
                                       isa::to_string(in.insn.opcode), prog.streams[s].name));

    prog.load_constants(hbm.data(), hbm.size());  // the Program's constant tensors
    prog_ = &prog;
    hbm_ = &hbm;
    opt_ = &opt;
    error_.clear();
    result_ = RunResult{};
    if (opt.check) {
      golden_ = std::make_unique<GoldenModel>(preset_, prog.hbm_bytes);
      std::memcpy(golden_->hbm(), hbm.data(), hbm.size());
      if (opt.golden_setup) opt.golden_setup(*golden_);
    } else {
      golden_.reset();
    }
    job_pending_ = true;
    job_ev_.notify(SC_ZERO_TIME);
    const auto t0 = std::chrono::steady_clock::now();
    sc_start();
    result_.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    prog_ = nullptr;
    golden_.reset();
    if (!error_.empty()) throw SimError(error_);
    return result_;
  }

 private:
  // ---- per-stream sequencer state ------------------------------------------------------
  struct Seq {
    const Stream* stream = nullptr;
    size_t pc = 0;               // next instruction to issue
    std::deque<uint32_t> inflight;  // issued, not complete (engine streams)
    bool head_ready_set = false;    // record of the head's ready cycle taken
    // DMA queue streams
    bool dma_busy = false;       // a transfer is between issue and completion
    uint64_t dma_start_at = 0;   // cycle the fixed cost has elapsed
    bool dma_handed = false;     // handed to the RTL
    uint32_t dma_engines_done = 0;
    uint32_t dma_index = 0;
  };

  static bool is_dma_stream(unsigned s) { return s >= kNumEngineStreams; }
  const isa::Insn& insn_of(unsigned s, uint32_t i) const { return prog_->streams[s].insns[i].insn; }
  InsnRecord& rec(unsigned s, uint32_t i) { return result_.records[rec_base_[s] + i]; }

  bool wait_holds(const isa::Insn& in) const {
    return sem_cond_holds(in.wait_cond, sem_[in.wait_sem], in.wait_val);
  }
  void fire(const isa::Insn& in) {
    if (in.upd_op != isa::SemOp::none) sem_[in.upd_sem] = sem_apply(in.upd_op, sem_[in.upd_sem], in.upd_val);
  }

  // An instruction finished: fire its completion update, check it, count it.
  void complete(unsigned s, uint32_t i, uint64_t now) {
    const isa::Insn& in = insn_of(s, i);
    if (in.upd_when == isa::SemWhen::complete && !is_dma_stream(s)) fire(in);
    rec(s, i).end = now;
    ++result_.instructions;
    ++done_count_;
    last_progress_cycle_ = now;
    if (in.opcode == isa::Opcode::dma_copy) ++result_.dma_transfers;
    if (golden_) check(s, i, now);
  }

  void check(unsigned s, uint32_t i, uint64_t now) {
    const isa::Insn& in = insn_of(s, i);
    golden_->execute(in);
    // A load's result is the array's weights, seen through the multiplies that use them. A
    // multiply whose PSUM destination a later multiply in flight already writes is checked
    // through that one (the last of an accumulation group holds the sum of all).
    if (in.opcode == isa::Opcode::sem_wait || in.opcode == isa::Opcode::load_stationary) return;
    if (in.opcode == isa::Opcode::multiply_moving && pe_overwritten(i)) return;
    ++result_.checked_instructions;
    check_operand(s, i, now, in.dst, "");
    if (in.opcode == isa::Opcode::activation && in.dst2.num_part != 0) check_operand(s, i, now, in.dst2, " (reduce_res)");
  }

  // Compares one destination operand of instruction i of stream s, RTL against golden model.
  void check_operand(unsigned s, uint32_t i, uint64_t now, const isa::Ap& d, const char* which) {
    const isa::Insn& in = insn_of(s, i);
    auto expected = [&](uint32_t part, int64_t addr, unsigned n) { return golden_->read_bits(d.mem, part, addr, n); };
    auto actual = [&](uint32_t part, int64_t addr, unsigned n) -> uint32_t {
      uint32_t v = 0;
      if (d.mem == isa::Buffer::hbm) {
        std::memcpy(&v, hbm_->data() + addr, n);
      } else {
        const uint32_t word = d.mem == isa::Buffer::psum ? psum_word(part, static_cast<uint64_t>(addr) / 4)
                                                         : sbuf_word(part, static_cast<uint64_t>(addr) / 4);
        v = (n == 4) ? word : ((addr & 2) ? word >> 16 : word & 0xffff);
      }
      return v;
    };
    if (auto mm = first_mismatch(d, expected, actual)) {
      const auto& loc = prog_->locations.at(prog_->streams[s].insns[i].loc);
      throw SimError(fmt::format(
          "check: RTL and golden model differ after {}[{}] completed at cycle {}\n  {}\n  at {}:{}\n"
          "  first difference{}: element {} (partition {}, byte {:#x}): golden {:#0{}x}, RTL {:#0{}x}",
          prog_->streams[s].name, i, now, format_insn(in), loc.file, loc.line, which, mm->index, mm->partition,
          mm->byte_addr, mm->expected_bits, 2 + 2 * isa::dtype_bytes(d.dtype), mm->actual_bits,
          2 + 2 * isa::dtype_bytes(d.dtype)));
    }
  }

  std::string deadlock_report() const {
    std::string r = "deadlock: every stream waits on a semaphore that nothing in flight will change\n";
    for (unsigned s = 0; s < seqs_.size(); ++s) {
      const Seq& q = seqs_[s];
      if (q.pc >= q.stream->insns.size()) continue;
      const isa::Insn& in = insn_of(s, static_cast<uint32_t>(q.pc));
      r += fmt::format("  {}[{}] {}  (S[{}] = {})\n", q.stream->name, q.pc, format_insn(in), in.wait_sem, sem_[in.wait_sem]);
    }
    return r;
  }

  // ---- the clock thread --------------------------------------------------------------
  void thread() {
    for (;;) {
      while (!job_pending_) wait(job_ev_);
      job_pending_ = false;
      try {
        run_job();
      } catch (const std::exception& e) {
        error_ = e.what();
      }
      if (fst_) {  // keep what was dumped up to a failure: that is when it is wanted most
        fst_->close();
        fst_.reset();
      }
      sc_pause();
      wait(SC_ZERO_TIME);
    }
  }

  void clock_edge() {
    clk_.write(true);
    wait(half_);
    if (fst_ && wave_now_) fst_->dump(wave_ps(2 * wave_cycle_));
    clk_.write(false);
    wait(half_);
    if (fst_ && wave_now_) fst_->dump(wave_ps(2 * wave_cycle_ + 1));
  }

  // Device time of half-cycle h in picoseconds (the dump's time unit).
  uint64_t wave_ps(uint64_t h) const { return h * 500000ull / preset_.clock_mhz; }

  void open_waves() {
    const RunOptions& o = *opt_;
    fst_ = std::make_unique<VerilatedFstC>();
    rtl_->trace(fst_.get(), 99);
    for (const auto& name : o.waves_scopes) {
      const WaveScope* sc = nullptr;
      for (const auto& w : kWaveScopes)
        if (name == w.name) sc = &w;
      if (!sc) {
        std::string known;
        for (const auto& w : kWaveScopes) known += std::string(known.empty() ? "" : ", ") + w.name;
        throw SimError(fmt::format("waveform scope '{}' is unknown (known: {})", name, known));
      }
      const std::string top = std::string(rtl_->name()) + ".ncore_top";  // e.g. ncore_trn2.ncore_top
      if (*sc->hier) fst_->dumpvars(99, top + "." + sc->hier);
      else fst_->dumpvars(1, top);
    }
    fst_->set_time_unit("1ps");
    fst_->set_time_resolution("1ps");
    fst_->open(o.waves.c_str());
    if (!fst_->isOpen()) throw SimError(fmt::format("cannot open waveform file {}", o.waves));
  }

  void run_job() {
    const Program& prog = *prog_;
    hbm_model_.reset(hbm_->data(), hbm_->size());
    sem_.fill(0);
    seqs_.assign(prog.streams.size(), Seq{});
    rec_base_.assign(prog.streams.size(), 0);
    size_t total = 0;
    for (unsigned s = 0; s < prog.streams.size(); ++s) {
      seqs_[s].stream = &prog.streams[s];
      rec_base_[s] = total;
      total += prog.streams[s].insns.size();
    }
    result_.records.assign(total, InsnRecord{});
    for (unsigned s = 0; s < prog.streams.size(); ++s)
      for (uint32_t i = 0; i < prog.streams[s].insns.size(); ++i) {
        rec(s, i).stream = s;
        rec(s, i).index = i;
      }
    result_.streams.assign(prog.streams.size(), StreamStats{});
    for (unsigned s = 0; s < prog.streams.size(); ++s) result_.streams[s].name = prog.streams[s].name;
    done_count_ = 0;
    total_ = total;

    if (!opt_->waves.empty()) open_waves();
    wave_cycle_ = 0;
    wave_now_ = false;

    // Reset: memories to zero (the golden model's start), RTL state through rst_ni.
    auto& mem = rtl_->rootp->ncore_top__DOT__u_sbuf__DOT__mem_q;
    for (unsigned p = 0; p < preset_.num_partitions; ++p) std::memset(&mem[p][0], 0, preset_.sbuf_bytes);
    auto& pmem = rtl_->rootp->ncore_top__DOT__u_psum__DOT__mem_q;
    for (unsigned p = 0; p < preset_.num_partitions; ++p) std::memset(&pmem[p][0], 0, preset_.psum_bytes);
    pe_fl_.clear();
    pe_pending_ = false;
    pe_valid_.write(false);
    dve_.valid.write(false);
    act_.valid.write(false);
    dma_valid_.write(false);
    hq_credit_.write(0);
    credits_.assign(E_, 0);
    hr_valid_.write(0);
    ha_valid_.write(0);
    rst_n_.write(false);
    clock_edge();
    clock_edge();
    rst_n_.write(true);
    clock_edge();

    const uint64_t fixed = preset_.dma_fixed_cost_ns * preset_.clock_mhz / 1000;
    const uint64_t stall_limit = opt_->stall_limit ? opt_->stall_limit : kDefaultStallLimit;
    const auto wall0 = std::chrono::steady_clock::now();
    auto next_report = wall0 + std::chrono::duration<double>(opt_->progress_seconds);
    unsigned dma_rr = 0;
    uint64_t now = 0;
    last_progress_cycle_ = 0;
    sc_bv<VTopWidths::kRdataBits> rdata_bv;

    for (;;) {
      wave_cycle_ = now;
      wave_now_ = now >= opt_->waves_start && now < opt_->waves_end;
      // ---------- 1. inputs for cycle `now` --------------------------------------------
      bool acted = false;
      // Engine streams: sem_waits at their heads (the pool stream holds nothing else here).
      for (unsigned s = 0; s < kNumEngineStreams; ++s) {
        Seq& q = seqs_[s];
        // sequencer-only instructions at the head retire as soon as their wait holds
        while (q.pc < q.stream->insns.size()) {
          const isa::Insn& in = insn_of(s, static_cast<uint32_t>(q.pc));
          note_ready(s, q, now);
          if (in.opcode != isa::Opcode::sem_wait || !wait_holds(in)) break;
          const auto i = static_cast<uint32_t>(q.pc++);
          q.head_ready_set = false;
          rec(s, i).issue = rec(s, i).start = now;
          fire(in);  // a sem_wait's update fires once its wait holds
          rec(s, i).end = now;
          ++result_.instructions;
          ++done_count_;
          if (golden_) golden_->execute(in);
          acted = true;
        }
      }
      // Vector and scalar engines: one instruction at a time.
      acted |= single_issue(dve_, now);
      acted |= single_issue(act_, now);
      // Tensor engine: one instruction presented at a time, when the engine's ready for its
      // kind says it takes it at once; several may be in the engine (a load in the shadow of
      // a multiply, a multiply waiting behind the streaming one).
      {
        const unsigned s = static_cast<unsigned>(StreamKind::pe);
        Seq& q = seqs_[s];
        bool drive = false;
        if (!pe_pending_ && q.pc < q.stream->insns.size()) {
          const isa::Insn& in = insn_of(s, static_cast<uint32_t>(q.pc));
          const bool ls = in.opcode == isa::Opcode::load_stationary;
          if (in.opcode != isa::Opcode::sem_wait && wait_holds(in) &&
              (ls ? pe_ls_ready_.read() : pe_mm_ready_.read())) {
            detail::to_bv(in, pe_bv_);
            pe_insn_.write(pe_bv_);
            drive = true;
            pe_pending_ = true;
            const auto i = static_cast<uint32_t>(q.pc++);
            q.head_ready_set = false;
            q.inflight.push_back(i);
            pe_fl_.push_back(PeInFlight{i, !ls});
            rec(s, i).issue = now;
            acted = true;
          }
        }
        pe_valid_.write(drive);
      }
      // DMA queues: wait -> fixed cost -> hand to the RTL -> engines done.
      {
        const uint32_t q_free = dma_q_free_.read();
        bool drive = false;
        for (unsigned k = 0; k < Q_; ++k) {
          const unsigned qi = (dma_rr + k) % Q_;
          const unsigned s = kNumEngineStreams + qi;
          Seq& q = seqs_[s];
          if (!q.dma_busy) {
            while (q.pc < q.stream->insns.size()) {
              const isa::Insn& in = insn_of(s, static_cast<uint32_t>(q.pc));
              note_ready(s, q, now);
              if (!wait_holds(in)) break;
              const auto i = static_cast<uint32_t>(q.pc++);
              q.head_ready_set = false;
              rec(s, i).issue = now;
              acted = true;
              if (in.opcode == isa::Opcode::sem_wait) {
                fire(in);
                rec(s, i).start = rec(s, i).end = now;
                ++result_.instructions;
                ++done_count_;
                if (golden_) golden_->execute(in);
                continue;
              }
              q.dma_busy = true;
              q.dma_handed = false;
              q.dma_start_at = now + fixed;
              q.dma_engines_done = 0;
              q.dma_index = i;
              break;
            }
          }
          if (q.dma_busy && !q.dma_handed && !drive && now >= q.dma_start_at && ((q_free >> qi) & 1u)) {
            const isa::Insn& in = insn_of(s, q.dma_index);
            detail::to_bv(in, dma_bv_);
            dma_insn_.write(dma_bv_);
            drive = true;
            q.dma_handed = true;
            rec(s, q.dma_index).start = now;
            if (in.upd_when == isa::SemWhen::read) {
              for (unsigned e = 0; e < E_; ++e) fire(in);
            }
            dma_rr = (qi + 1) % Q_;
            acted = true;
          }
        }
        dma_valid_.write(drive);
      }
      // HBM: the requests the engines send at this edge (each was sent with a credit, so it
      // is accepted), new credits within the bandwidth, read data and acknowledgements due.
      {
        hbm_model_.advance(1);
        const uint32_t valid = hq_valid_.read();
        if (valid) {
          const uint32_t we = hq_we_.read();
          const sc_bv<VTopWidths::kLineBits> line_bv = hq_line_.read();
          const sc_bv<VTopWidths::kBenBits> ben_bv = hq_ben_.read();
          const sc_bv<VTopWidths::kRdataBits> wdata_bv = hq_wdata_.read();
          const unsigned lw = 40 - 4;
          for (unsigned e = 0; e < E_; ++e) {
            if (!((valid >> e) & 1u)) continue;
            HbmRequest r;
            r.write = (we >> e) & 1u;
            r.line = detail::bv_bits(line_bv, e * lw, lw);
            r.ben = static_cast<uint16_t>(detail::bv_bits(ben_bv, e * kLineBytes, kLineBytes));
            if (r.write)
              for (unsigned w = 0; w < 4; ++w) {
                const uint32_t word = wdata_bv.get_word(static_cast<int>(e * 4 + w));
                std::memcpy(r.data.data() + 4 * w, &word, 4);
              }
            if (credits_[e] == 0) throw SimError(fmt::format("DMA engine {} sent an HBM request without a credit", e));
            --credits_[e];
            hbm_model_.accept(e, r, now);
          }
          acted = true;
        }
        uint32_t grant = 0;
        for (unsigned k = 0; k < E_; ++k) {
          const unsigned e = (hbm_model_.first_engine() + k) % E_;
          if (credits_[e] < kMaxCredits && hbm_model_.take_line()) {
            ++credits_[e];
            grant |= 1u << e;
          }
        }
        hbm_model_.end_cycle();
        hq_credit_.write(grant);
        uint32_t rv = 0, av = 0;
        for (unsigned e = 0; e < E_; ++e) {
          if (const auto* d = hbm_model_.read_due(e, now)) {
            for (unsigned w = 0; w < 4; ++w) {
              uint32_t word;
              std::memcpy(&word, d->data() + 4 * w, 4);
              rdata_bv.set_word(static_cast<int>(e * 4 + w), word);
            }
            rv |= 1u << e;
            hbm_model_.pop_read(e);
          }
          if (hbm_model_.ack_due(e, now)) {
            av |= 1u << e;
            hbm_model_.pop_ack(e);
          }
        }
        if (rv) hr_rdata_.write(rdata_bv);
        hr_valid_.write(rv);
        ha_valid_.write(av);
        if (rv || av) acted = true;
      }

      // ---------- 2. the edge ------------------------------------------------------------
      clock_edge();
      ++result_.evaluated_cycles;
      for (unsigned s = 0; s < kNumEngineStreams; ++s)
        if (!seqs_[s].inflight.empty()) ++result_.streams[s].active_cycles;

      // ---------- 3. outputs after the edge ------------------------------------------------
      single_outputs(dve_, now);
      single_outputs(act_, now);
      pe_outputs(now);
      const sc_bv<VTopWidths::kDoneBits> done = dma_done_.read();
      for (unsigned qi = 0; qi < Q_; ++qi) {
        const uint64_t bits = detail::bv_bits(done, qi * E_, E_);
        if (!bits) continue;
        const unsigned s = kNumEngineStreams + qi;
        Seq& q = seqs_[s];
        if (!q.dma_busy || !q.dma_handed) throw SimError(fmt::format("DMA queue {} reported done with no transfer", qi));
        const isa::Insn& in = insn_of(s, q.dma_index);
        const unsigned n = static_cast<unsigned>(__builtin_popcountll(bits));
        if (in.upd_when == isa::SemWhen::complete)
          for (unsigned k = 0; k < n; ++k) fire(in);  // one update per DMA engine
        q.dma_engines_done += n;
        if (q.dma_engines_done == E_) {
          q.dma_busy = false;
          complete(s, q.dma_index, now + 1);
        }
      }
      ++now;
      last_now_ = now;

      for (unsigned s = 0; s < seqs_.size(); ++s) {
        const Seq& q = seqs_[s];
        if (q.pc < q.stream->insns.size() && q.inflight.empty() && !q.dma_busy &&
            !wait_holds(insn_of(s, static_cast<uint32_t>(q.pc))))
          ++result_.streams[s].sem_wait_cycles;
      }

      // ---------- finished? ---------------------------------------------------------------
      if (done_count_ == total_) break;
      if (now - last_progress_cycle_ > stall_limit)
        throw SimError(fmt::format("no instruction completed for {} cycles (at cycle {}); giving up\n{}", stall_limit, now,
                                   deadlock_report()));
      if (opt_->progress && opt_->progress_seconds > 0) {
        const auto t = std::chrono::steady_clock::now();
        if (t >= next_report) {
          opt_->progress(now, done_count_, total_);
          next_report = t + std::chrono::duration<double>(opt_->progress_seconds);
        }
      }

      // ---------- skip idle cycles ----------------------------------------------------------
      // Only when nothing acted this cycle, the RTL is quiet, and no sequencer could act on
      // what the edge just reported (a done pulse may have satisfied a wait).
      if (!acted && !busy_.read() && hq_valid_.read() == 0 && !sequencer_can_act()) {
        uint64_t next = hbm_model_.next_event();
        bool any_timer = false;
        for (unsigned qi = 0; qi < Q_; ++qi) {
          const Seq& q = seqs_[kNumEngineStreams + qi];
          if (q.dma_busy && !q.dma_handed) {
            next = std::min(next, q.dma_start_at);
            any_timer = true;
          }
        }
        const bool inflight = !seqs_[static_cast<unsigned>(StreamKind::dve)].inflight.empty() ||
                              !seqs_[static_cast<unsigned>(StreamKind::act)].inflight.empty() || !pe_fl_.empty() || any_timer ||
                              !hbm_model_.idle() || [&] {
                                for (unsigned qi = 0; qi < Q_; ++qi)
                                  if (seqs_[kNumEngineStreams + qi].dma_busy) return true;
                                return false;
                              }();
        if (!inflight) throw SimError(deadlock_report());
        if (opt_->skip_idle && next != std::numeric_limits<uint64_t>::max() && next > now) {
          const uint64_t skip = (next - now) / period_ * period_;
          if (skip > 0) {
            wait(sc_time(static_cast<double>(2 * skip), SC_NS));
            hbm_model_.advance(skip);
            now += skip;
            result_.skipped_cycles += skip;
            for (unsigned s = 0; s < seqs_.size(); ++s) {
              const Seq& q = seqs_[s];
              if (q.pc < q.stream->insns.size() && q.inflight.empty() && !q.dma_busy) result_.streams[s].sem_wait_cycles += skip;
            }
          }
        }
      }
    }
    if (fst_) {
      fst_->close();
      fst_.reset();
    }
    result_.cycles = now;
    result_.time_us = static_cast<double>(now) / static_cast<double>(preset_.clock_mhz);
    result_.hbm_read_bytes = hbm_model_.read_bytes();
    result_.hbm_write_bytes = hbm_model_.write_bytes();
    result_.sbuf_read_bytes = rtl_->rootp->ncore_top__DOT__u_sbuf__DOT__perf_rd_bytes_q;  // RTL counters
    result_.sbuf_write_bytes = rtl_->rootp->ncore_top__DOT__u_sbuf__DOT__perf_wr_bytes_q;
    result_.psum_read_bytes = rtl_->rootp->ncore_top__DOT__u_psum__DOT__perf_rd_bytes_q;
    result_.psum_write_bytes = rtl_->rootp->ncore_top__DOT__u_psum__DOT__perf_wr_bytes_q;
    result_.te_macs = rtl_->rootp->ncore_top__DOT__u_te__DOT__perf_macs_q;
    result_.te_array_busy_cycles = rtl_->rootp->ncore_top__DOT__u_te__DOT__perf_busy_q;
    for (unsigned s = 0; s < seqs_.size(); ++s) result_.streams[s].instructions = prog.streams[s].insns.size();
  }

  // A one-instruction-at-a-time engine (vector, scalar): its sequencer presents the stream's
  // head when the engine is ready, nothing is in flight and the head's wait holds. Returns
  // whether it issued.
  bool single_issue(detail::SingleEngine& e, uint64_t now) {
    const unsigned s = static_cast<unsigned>(e.kind);
    Seq& q = seqs_[s];
    bool drive = false;
    if (q.pc < q.stream->insns.size() && q.inflight.empty() && e.ready.read()) {
      const isa::Insn& in = insn_of(s, static_cast<uint32_t>(q.pc));
      if (in.opcode != isa::Opcode::sem_wait && wait_holds(in)) {
        detail::to_bv(in, e.bv);
        e.insn.write(e.bv);
        drive = true;
        const auto i = static_cast<uint32_t>(q.pc++);
        q.head_ready_set = false;
        q.inflight.push_back(i);
        rec(s, i).issue = rec(s, i).start = now;
      }
    }
    e.valid.write(drive);
    return drive;
  }

  // Its pulses after an edge: read start (read-time updates) and done.
  void single_outputs(detail::SingleEngine& e, uint64_t now) {
    const unsigned s = static_cast<unsigned>(e.kind);
    if (e.rd_start.read() && !seqs_[s].inflight.empty()) {
      const isa::Insn& in = insn_of(s, seqs_[s].inflight.front());
      if (in.upd_when == isa::SemWhen::read) fire(in);
    }
    if (e.done.read()) {
      if (seqs_[s].inflight.empty()) throw SimError(fmt::format("{} reported done with no instruction in flight", e.what));
      const uint32_t i = seqs_[s].inflight.front();
      seqs_[s].inflight.pop_front();
      complete(s, i, now + 1);
    }
  }

  // The tensor engine's pulses after an edge: accept, read starts (read-time updates) and
  // dones, each in program order within its kind; instructions retire in program order (a
  // load may finish before the multiply ahead of it).
  void pe_outputs(uint64_t now) {
    const unsigned s = static_cast<unsigned>(StreamKind::pe);
    if (pe_accept_.read()) {
      if (!pe_pending_) throw SimError("tensor engine accepted an instruction that was not presented");
      pe_pending_ = false;
    }
    auto mark = [&](bool mm, bool PeInFlight::*flag, const char* what) {
      for (auto& f : pe_fl_)
        if (f.mm == mm && !(f.*flag)) {
          f.*flag = true;
          return &f;
        }
      throw SimError(fmt::format("tensor engine reported {} {} with none in flight", mm ? "multiply" : "load", what));
    };
    if (pe_ls_start_.read() || pe_mm_start_.read()) {
      for (bool mm : {false, true}) {
        if (!(mm ? pe_mm_start_.read() : pe_ls_start_.read())) continue;
        PeInFlight* f = mark(mm, &PeInFlight::started, "a read start");
        rec(s, f->index).start = now;
        const isa::Insn& in = insn_of(s, f->index);
        if (in.upd_when == isa::SemWhen::read) fire(in);
      }
    }
    if (pe_ls_done_.read()) mark(false, &PeInFlight::done, "done");
    if (pe_mm_done_.read()) mark(true, &PeInFlight::done, "done");
    while (!pe_fl_.empty() && pe_fl_.front().done) {
      const uint32_t i = pe_fl_.front().index;
      if (seqs_[s].inflight.empty() || seqs_[s].inflight.front() != i)
        throw SimError("tensor engine sequencer lost track of its instructions");
      seqs_[s].inflight.pop_front();
      complete(s, i, now + 1);
      pe_fl_.pop_front();
    }
  }

  // Whether a multiply later than PE instruction i, already presented, writes PSUM where i does.
  bool pe_overwritten(uint32_t i) const {
    const unsigned s = static_cast<unsigned>(StreamKind::pe);
    const Box b = ap_box(insn_of(s, i).dst);
    for (const auto& f : pe_fl_)
      if (f.index > i && f.mm && ap_box(insn_of(s, f.index).dst).overlaps(b)) return true;
    return false;
  }

  void note_ready(unsigned s, Seq& q, uint64_t now) {
    if (!q.head_ready_set) {
      rec(s, static_cast<uint32_t>(q.pc)).ready = now;
      q.head_ready_set = true;
    }
  }

  // Whether some sequencer will issue or retire its head instruction next cycle.
  bool sequencer_can_act() const {
    for (unsigned s = 0; s < seqs_.size(); ++s) {
      const Seq& q = seqs_[s];
      if (q.pc >= q.stream->insns.size()) continue;
      const isa::Insn& in = insn_of(s, static_cast<uint32_t>(q.pc));
      if (!wait_holds(in)) continue;
      if (s == static_cast<unsigned>(StreamKind::pe) && in.opcode != isa::Opcode::sem_wait) {
        if (!pe_pending_ && (in.opcode == isa::Opcode::load_stationary ? pe_ls_ready_.read() : pe_mm_ready_.read()))
          return true;
        continue;
      }
      if (is_dma_stream(s) ? !q.dma_busy : (in.opcode == isa::Opcode::sem_wait || q.inflight.empty())) return true;
    }
    for (unsigned qi = 0; qi < Q_; ++qi) {  // a transfer whose fixed cost is over, to hand over
      const Seq& q = seqs_[kNumEngineStreams + qi];
      if (q.dma_busy && !q.dma_handed && q.dma_start_at <= last_now_) return true;
    }
    return false;
  }

  // Port widths of the Verilated top (sc_bv sizes), from the preset.
  struct VTopWidths {
    static constexpr int kLineBits = T::kEngines * 36;
    static constexpr int kBenBits = T::kEngines * 16;
    static constexpr int kRdataBits = T::kEngines * 128;
    static constexpr int kDoneBits = T::kQueues * T::kEngines;
  };

  std::unique_ptr<typename T::Model> rtl_;
  Preset preset_;
  unsigned E_, Q_;
  uint64_t period_ = 1;
  const sc_time half_{1, SC_NS};

  sc_signal<bool> clk_{"clk"}, rst_n_{"rst_n"};
  detail::SingleEngine dve_{StreamKind::dve, "dve", "vector engine"};
  detail::SingleEngine act_{StreamKind::act, "act", "scalar engine"};
  sc_signal<sc_bv<isa::kInsnBits>> dma_insn_{"dma_insn"};
  sc_bv<isa::kInsnBits> dma_bv_;
  sc_signal<bool> dma_valid_{"dma_valid"};
  sc_signal<bool> pe_valid_{"pe_valid"}, pe_ls_ready_{"pe_ls_ready"}, pe_mm_ready_{"pe_mm_ready"}, pe_accept_{"pe_accept"},
      pe_ls_start_{"pe_ls_start"}, pe_mm_start_{"pe_mm_start"}, pe_ls_done_{"pe_ls_done"}, pe_mm_done_{"pe_mm_done"};
  sc_signal<sc_bv<isa::kInsnBits>> pe_insn_{"pe_insn"};
  sc_bv<isa::kInsnBits> pe_bv_;
  struct PeInFlight {
    uint32_t index = 0;
    bool mm = false;       // a multiply (else a load)
    bool started = false;  // its read-start pulse seen
    bool done = false;     // its done pulse seen
  };
  std::deque<PeInFlight> pe_fl_;  // presented, not retired, in program order
  bool pe_pending_ = false;       // presented, not yet accepted
  sc_signal<uint32_t> dma_q_free_{"dma_q_free"}, dma_rd_start_{"dma_rd_start"};
  sc_signal<sc_bv<VTopWidths::kDoneBits>> dma_done_{"dma_done"};
  sc_signal<uint32_t> hq_valid_{"hq_valid"}, hq_credit_{"hq_credit"}, hq_we_{"hq_we"};
  sc_signal<sc_bv<VTopWidths::kLineBits>> hq_line_{"hq_line"};
  sc_signal<sc_bv<VTopWidths::kBenBits>> hq_ben_{"hq_ben"};
  sc_signal<sc_bv<VTopWidths::kRdataBits>> hq_wdata_{"hq_wdata"}, hr_rdata_{"hr_rdata"};
  sc_signal<uint32_t> hr_valid_{"hr_valid"}, ha_valid_{"ha_valid"};
  sc_signal<bool> busy_{"busy"};
  sc_signal<uint32_t> ce_{"ce"};

  std::unique_ptr<VerilatedFstC> fst_;
  uint64_t wave_cycle_ = 0;
  bool wave_now_ = false;

  HbmModel hbm_model_;
  static constexpr unsigned kMaxCredits = 4;  // at most 7: the width of ncore_dma_engine's counter
  std::vector<unsigned> credits_;             // credits each engine holds (as the RTL will)
  std::array<uint32_t, kNumSemaphores> sem_{};
  std::vector<Seq> seqs_;
  std::vector<size_t> rec_base_;
  size_t done_count_ = 0, total_ = 0;
  uint64_t last_progress_cycle_ = 0;
  uint64_t last_now_ = 0;

  sc_event job_ev_;
  bool job_pending_ = false;
  const Program* prog_ = nullptr;
  std::vector<uint8_t>* hbm_ = nullptr;
  const RunOptions* opt_ = nullptr;
  std::unique_ptr<GoldenModel> golden_;
  RunResult result_;
  std::string error_;
};

// A preset's SystemC top level around a new Verilated core. The Verilated module is a top-level
// SystemC module named `rtl_name` (its trace scopes and the waves/ save files start there), the
// same for every thread count of a preset.
template <class T>
Core* make_sc_core(const Preset& p, const char* rtl_name, const char* top_name) {
  if (p.dma_engines != T::kEngines || p.dma_queues != T::kQueues)
    throw SimError(fmt::format("preset {} does not match the ports of its Verilated model", p.name));
  Verilated::traceEverOn(true);  // waveforms can be opened for any run
  auto* rtl = new typename T::Model(rtl_name);
  return new ScCore<T>(top_name, p, rtl);
}

}  // namespace ncore::sim
