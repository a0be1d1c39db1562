// The SystemC top level's clock loop; see core_top.hpp.
#include "core/core_top.hpp"

#include <verilated_fst_c.h>

#include <algorithm>
#include <numeric>
#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

#include <fmt/format.h>

#include "ncore/error.hpp"
#include "ncore/interrupt.hpp"
#include "ncore/validate.hpp"
#include "trace/rtl_assert.hpp"

namespace ncore::sim {
namespace {

std::vector<InsnStream> make_streams(size_t n, SemaphoreFile& sems, InsnSink& sink) {
  std::vector<InsnStream> v;
  v.reserve(n);
  for (size_t s = 0; s < n; ++s) v.emplace_back(sems, sink);
  return v;
}

std::vector<InsnStream*> stream_ptrs(std::vector<InsnStream>& v, size_t first, size_t last) {
  std::vector<InsnStream*> p;
  for (size_t s = first; s < last; ++s) p.push_back(&v[s]);
  return p;
}

InsnStream& engine_stream(std::vector<InsnStream>& v, StreamKind k) { return v[static_cast<unsigned>(k)]; }

// AddressSanitizer builds. SystemC's coroutines (QuickThreads) announce every switch between
// stacks to ASan (__sanitizer_start_switch_fiber), but for its main coroutine, the thread's own
// stack, they pass no bounds (0, 0): once sc_start returns, ASan takes the main stack to be
// empty. An exception thrown there afterwards (a SimError out of run(), a test's failed check)
// then cannot have the frames it unwinds unpoisoned (ASan's "ignoring requested
// __asan_handle_no_return"), and their stale poison is reported as stack-use-after-scope when
// later calls reuse that stack. A switch to the main stack's real bounds, made right after
// sc_start, gives ASan the bounds back. Nothing to do without ASan.
#if defined(__SANITIZE_ADDRESS__)
void restore_main_stack_bounds() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* bottom = nullptr;
  size_t size = 0;
  const bool ok = pthread_attr_getstack(&attr, &bottom, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!ok) return;
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
}
#else
void restore_main_stack_bounds() {}
#endif

}  // namespace

CoreTop::CoreTop(sc_module_name name, const Preset& preset, unsigned threads, const RtlBinder& bind)
    : sc_module(name),
      preset_(preset),
      threads_(threads),
      rtl_(bind(pins_, preset_)),
      hbm_(preset_, pins_.hbm, *rtl_),
      streams_(make_streams(kNumEngineStreams + static_cast<size_t>(preset.dma_queues), sems_, *this)),
      sem_waits_(stream_ptrs(streams_, 0, kNumEngineStreams)),
      dve_(engine_stream(streams_, StreamKind::dve), pins_.dve, "vector engine"),
      act_(engine_stream(streams_, StreamKind::act), pins_.act, "scalar engine"),
      pe_(engine_stream(streams_, StreamKind::pe), pins_.pe),
      dma_(stream_ptrs(streams_, kNumEngineStreams, streams_.size()), pins_.dma, *rtl_, preset_),
      sequencers_{&sem_waits_, &dve_, &act_, &pe_, &dma_} {
  period_ = std::lcm(std::lcm(preset.dve_ce_den, preset.dma_ce_den), preset.act_ce_den);
  SC_THREAD(thread);
}

CoreTop::~CoreTop() = default;

void CoreTop::check_program(const Program& prog, ByteSpan hbm) const {
  const size_t q = static_cast<size_t>(preset_.dma_queues);
  if (prog.preset != preset_.name)
    throw SimError(fmt::format("the program was traced for preset '{}' but is run on '{}'", prog.preset, preset_.name));
  if (hbm.size != prog.hbm_bytes)
    throw SimError(fmt::format("HBM image holds {} bytes, the program needs {}", hbm.size, prog.hbm_bytes));
  if (prog.streams.size() != kNumEngineStreams + q)
    throw SimError(fmt::format("the program has {} streams; preset {} needs {} (5 engines + {} DMA queues)",
                               prog.streams.size(), preset_.name, kNumEngineStreams + q, q));
  validate_program(prog, preset_);
  const Stream& pool = prog.streams[static_cast<unsigned>(StreamKind::pool)];  // no sequencer for its engine
  for (const auto& in : pool.insns)
    if (in.insn.opcode != isa::Opcode::sem_wait)
      throw SimError(fmt::format("stream {} holds '{}', but this model has no {} engine yet", pool.name,
                                 isa::to_string(in.insn.opcode), pool.name));
}

RunResult CoreTop::run(const Program& prog, ByteSpan hbm, const RunOptions& opt) {
  check_program(prog, hbm);
  prog.load_constants(hbm.data, hbm.size);  // the Program's constant tensors
  prog_ = &prog;
  hbm_data_ = hbm;
  opt_ = &opt;
  error_.clear();
  interrupted_ = false;
  result_ = RunResult{};
  if (opt.check)
    check_ = std::make_unique<GoldenCheck>(preset_, prog, hbm, *rtl_, pe_, opt);
  else
    check_.reset();
  job_pending_ = true;
  job_ev_.notify(SC_ZERO_TIME);
  const auto t0 = std::chrono::steady_clock::now();
  sc_start();
  restore_main_stack_bounds();
  result_.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  prog_ = nullptr;
  check_.reset();
  if (interrupted_) throw Interrupted();
  if (!error_.empty()) throw SimError(error_);
  return result_;
}

void CoreTop::retired(const InsnStream& st, uint32_t index) {
  ++result_.instructions;
  ++done_count_;
  if (check_) check_->retired(st.insn(index));
}

void CoreTop::completed(const InsnStream& st, uint32_t index, uint64_t end) {
  ++result_.instructions;
  ++done_count_;
  last_progress_cycle_ = end;
  if (st.insn(index).opcode == isa::Opcode::dma_copy) ++result_.dma_transfers;
  if (check_ && check_->completed(st, index, end)) ++result_.checked_instructions;
}

// ---- the clock thread --------------------------------------------------------------------

void CoreTop::thread() {
  for (;;) {
    while (!job_pending_) wait(job_ev_);
    job_pending_ = false;
    try {
      run_job();
    } catch (const Interrupted&) {
      interrupted_ = true;
    } catch (const std::exception& e) {
      error_ = e.what();
    }
    close_waves();  // keep what was dumped up to a failure: that is when it is wanted most
    sc_pause();
    wait(SC_ZERO_TIME);
  }
}

void CoreTop::run_job() {
  start_run();
  reset_rtl();
  uint64_t now = start_up();
  for (;;) {
    const bool acted = drive_inputs(now);
    clock(now);
    read_outputs(now);
    ++now;
    count_sem_waits();
    if (finished()) break;
    watch(now);
    if (!acted && quiet(now)) now = skip_idle(now);
  }
  close_waves();
  finish_run(now);
}

// Streams, records and statistics for the Program; the semaphores at zero.
void CoreTop::start_run() {
  const Program& prog = *prog_;
  hbm_.reset(hbm_data_.data, hbm_data_.size);
  sems_.reset();
  size_t total = 0;
  for (const auto& st : prog.streams) total += st.insns.size();
  result_.records.assign(total, InsnRecord{});
  result_.streams.assign(prog.streams.size(), StreamStats{});
  size_t base = 0;
  for (unsigned s = 0; s < prog.streams.size(); ++s) {
    streams_[s].reset(s, prog.streams[s], result_.records.data() + base);
    for (uint32_t i = 0; i < prog.streams[s].insns.size(); ++i) {
      result_.records[base + i].stream = s;
      result_.records[base + i].index = i;
    }
    result_.streams[s].name = prog.streams[s].name;
    base += prog.streams[s].insns.size();
  }
  done_count_ = 0;
  total_ = total;
  last_progress_cycle_ = 0;
  stall_limit_ = opt_->stall_limit ? opt_->stall_limit : kDefaultStallLimit;
  if (!opt_->waves.empty()) open_waves();
  wave_cycle_ = 0;
  wave_now_ = false;
}

// Every input deasserted, two cycles in reset, memories to zero, and one cycle out of reset. The
// memories are cleared after the reset edges: a write in flight when an earlier run was cut short
// (a check mismatch) still lands on the first edge.
void CoreTop::reset_rtl() {
  for (Sequencer* q : sequencers_) q->reset();
  pins_.rst_n.write(false);
  clock_edge();
  clock_edge();
  rtl_->reset();
  pins_.rst_n.write(true);
  clock_edge();
  check_rtl(0);
  next_report_ = std::chrono::steady_clock::now() + std::chrono::duration<double>(opt_->progress_seconds);
}

// The kernel start-up: cycles [0, start) in which nothing issues. Returns start.
uint64_t CoreTop::start_up() {
  const uint64_t want = preset_.kernel_start_ns * preset_.clock_mhz / 1000;
  const uint64_t n = (want + period_ - 1) / period_ * period_;
  result_.start_cycles = n;
  result_.breakdown.start_up = n;
  if (opt_->skip_idle) {
    if (n) wait(sc_time(static_cast<double>(2 * n), SC_NS));
    hbm_.advance(n);
    result_.skipped_cycles += n;
  } else {
    for (uint64_t c = 0; c < n; ++c) tick(c);
  }
  desc_seen_ = rtl_->dma_desc_cycles();
  last_progress_cycle_ = n;
  return n;
}

// The time breakdown of `cycles` cycles after the start-up: for a clocked cycle, what the
// engines, the DMA's descriptor counter and the queues show after its edge; a skipped cycle has
// the RTL quiet (HBM data may be on its way, or a queue paying a fixed cost).
void CoreTop::classify(uint64_t cycles, bool evaluated) {
  TimeBreakdown& b = result_.breakdown;
  if (evaluated) {
    const uint64_t desc = rtl_->dma_desc_cycles();
    const bool desc_now = desc != desc_seen_;
    desc_seen_ = desc;
    for (unsigned s = 0; s < kNumEngineStreams; ++s) {
      if (!streams_[s].idle()) {
        b.compute += cycles;
        return;
      }
    }
    if (desc_now) {
      b.dma_descriptors += cycles;
      return;
    }
  }
  if ((evaluated && pins_.busy.read()) || !hbm_.idle()) b.dma_data += cycles;
  else if (dma_.paying_fixed_cost()) b.dma_fixed_cost += cycles;
  else b.other += cycles;
}

// 1. The inputs for cycle `now`; whether anything moved.
bool CoreTop::drive_inputs(uint64_t now) {
  bool acted = false;
  for (Sequencer* q : sequencers_) acted |= q->issue(now);
  acted |= hbm_.cycle(now);
  return acted;
}

// 2. The edge.
void CoreTop::clock(uint64_t now) {
  tick(now);
  for (unsigned s = 0; s < kNumEngineStreams; ++s)
    if (!streams_[s].idle()) ++result_.streams[s].active_cycles;
  classify(1, true);
}

// One clocked cycle, with its waveform dump.
void CoreTop::tick(uint64_t now) {
  wave_cycle_ = now;
  wave_now_ = now >= opt_->waves_start && now < opt_->waves_end;
  clock_edge();
  ++result_.evaluated_cycles;
  check_rtl(now);
}

// Stops the run when an RTL assertion failed (or Verilator stopped the RTL) at this edge.
void CoreTop::check_rtl(uint64_t now) {
  if (rtl::assertion_failed()) throw SimError(rtl::assertion_report(now));
  if (rtl::rtl_stopped())
    throw SimError(fmt::format("the RTL stopped at cycle {} ($stop or $error; Verilator's message is above)", now));
}

// 3. The outputs after the edge.
void CoreTop::read_outputs(uint64_t now) {
  for (Sequencer* q : sequencers_) q->edge(now);
}

// Streams whose head waits on its semaphore with nothing of theirs in flight.
void CoreTop::count_sem_waits() {
  for (const InsnStream& st : streams_)
    if (st.has_head() && st.idle() && !sems_.wait_holds(st.head())) ++result_.streams[st.index()].sem_wait_cycles;
}

// Gives up on a stall; stops on Ctrl-C; reports progress.
void CoreTop::watch(uint64_t now) {
  interrupt::check();
  if (now - last_progress_cycle_ > stall_limit_)
    throw SimError(fmt::format("no instruction completed for {} cycles (at cycle {}); giving up\n{}", stall_limit_, now,
                               deadlock_report()));
  if (opt_->progress && opt_->progress_seconds > 0) {
    const auto t = std::chrono::steady_clock::now();
    if (t >= next_report_) {
      opt_->progress(now, done_count_, total_);
      next_report_ = t + std::chrono::duration<double>(opt_->progress_seconds);
    }
  }
}

// Whether the RTL is quiet and no sequencer can act on what the edge just reported (a done
// pulse may have satisfied a wait), given that nothing acted this cycle.
bool CoreTop::quiet(uint64_t now) const {
  if (pins_.busy.read() || hbm_.requesting()) return false;
  return std::none_of(sequencers_.begin(), sequencers_.end(), [now](const Sequencer* q) { return q->can_act(now); });
}

// Jumps to the next event a sequencer or the HBM waits for, in whole clock-enable periods;
// throws the deadlock report when nothing is under way. Returns the new cycle.
uint64_t CoreTop::skip_idle(uint64_t now) {
  uint64_t next = hbm_.next_event();
  bool in_flight = !hbm_.idle();
  for (const Sequencer* q : sequencers_) {
    next = std::min(next, q->next_event());
    in_flight |= q->in_flight();
  }
  if (!in_flight) throw SimError(deadlock_report());
  if (!opt_->skip_idle || next == kNever || next <= now) return now;
  const uint64_t skip = (next - now) / period_ * period_;
  if (skip == 0) return now;
  wait(sc_time(static_cast<double>(2 * skip), SC_NS));
  classify(skip, false);
  hbm_.advance(skip);
  result_.skipped_cycles += skip;
  for (const InsnStream& st : streams_)
    if (st.has_head() && st.idle()) result_.streams[st.index()].sem_wait_cycles += skip;
  return now + skip;
}

void CoreTop::finish_run(uint64_t now) {
  result_.cycles = now;
  result_.time_us = static_cast<double>(now) / static_cast<double>(preset_.clock_mhz);
  result_.hbm_read_bytes = hbm_.read_bytes();
  result_.hbm_write_bytes = hbm_.write_bytes();
  rtl_->read_counters(result_);
  for (unsigned s = 0; s < prog_->streams.size(); ++s) result_.streams[s].instructions = prog_->streams[s].insns.size();
}

std::string CoreTop::deadlock_report() const {
  std::string r = "deadlock: every stream waits on a semaphore that nothing in flight will change\n";
  for (const InsnStream& st : streams_) {
    if (!st.has_head()) continue;
    const isa::Insn& in = st.head();
    r += fmt::format("  {}[{}] {}  (S[{}] = {})\n", st.name(), st.pc(), format_insn(in), in.wait_sem, sems_[in.wait_sem]);
  }
  return r;
}

// ---- clock and waveforms -----------------------------------------------------------------

void CoreTop::clock_edge() {
  pins_.clk.write(true);
  wait(half_);
  if (fst_ && wave_now_) fst_->dump(wave_ps(2 * wave_cycle_));
  pins_.clk.write(false);
  wait(half_);
  if (fst_ && wave_now_) fst_->dump(wave_ps(2 * wave_cycle_ + 1));
}

void CoreTop::open_waves() {
  const RunOptions& o = *opt_;
  fst_ = std::make_unique<VerilatedFstC>();
  rtl_->trace(*fst_);
  for (const auto& name : o.waves_scopes) {
    const WaveScope* sc = nullptr;
    for (const auto& w : kWaveScopes)
      if (name == w.name) sc = &w;
    if (!sc) {
      std::string known;
      for (const auto& w : kWaveScopes) known += std::string(known.empty() ? "" : ", ") + w.name;
      throw SimError(fmt::format("waveform scope '{}' is unknown (known: {})", name, known));
    }
    const std::string top = rtl_->name() + ".ncore_top";  // e.g. ncore_trn2.ncore_top
    if (*sc->hier)
      fst_->dumpvars(99, top + "." + sc->hier);
    else
      fst_->dumpvars(1, top);
  }
  fst_->set_time_unit("1ps");
  fst_->set_time_resolution("1ps");
  fst_->open(o.waves.c_str());
  if (!fst_->isOpen()) throw SimError(fmt::format("cannot open waveform file {}", o.waves));
}

void CoreTop::close_waves() {
  if (!fst_) return;
  fst_->close();
  fst_.reset();
}

}  // namespace ncore::sim
