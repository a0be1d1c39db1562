// The DMA bench: the Verilated ncore_dma_tb (DMA block + SBUF, tiny preset) with a C++
// sequencer and HBM responder around it, and the golden model beside it.
//
// Per clock, before the edge, the bench drives:
//   - the instruction port: the next waiting transfer whose queue slot is free (q_free_o);
//   - HBM credits: one per engine with probability `credit_pct`, never more than the engine can
//     hold (ncore_dma_engine's MaxCredit, 4), so none is lost;
//   - HBM read data and write acknowledgements that are due: each request is answered after a
//     latency drawn from [lat_lo, lat_hi] clocks, in order per engine;
//   - optional other SBUF traffic on the engine ports (reads anywhere, writes to the last
//     kNoiseBytes of every partition, which no transfer touches; the writes are mirrored into the
//     golden model as they are granted);
// and takes the HBM requests the engines make at this edge: a request without a credit is a
// protocol error; a write lands in HBM at once (as sim/hbm_model does), a read returns the line
// as it is now.
// After the edge it reads the queue outputs and checks, per queue: rd_start pulses once, the
// cycle after the transfer was taken; every engine pulses done exactly once per transfer (also
// when it owns none of the rows); the slot frees only after all engines are done, and then at
// once. A transfer is complete when all its engines are done: the golden model executes it and
// its destination must match (other transfers may still be in flight; the generator keeps
// concurrent transfers independent); the test then compares everything else too, except what
// the transfers still in flight write (compare_all with a skip mask). drain() lets everything
// finish and compares the whole SBUF and HBM.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_bits.hpp"
#include "bench_dut.hpp"
#include "Vncore_dma_tb.h"
#include "Vncore_dma_tb___024root.h"
#include "golden_model.hpp"
#include "ncore/ap.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"

namespace dma_tb {

using namespace ncore::tb;

constexpr unsigned kE = 2;            // DMA engines (tiny)
constexpr unsigned kQ = 4;            // queues (tiny)
constexpr unsigned kP = 16;           // partitions (tiny)
constexpr unsigned kLineB = 16;       // SBUF line / HBM request bytes
constexpr unsigned kHLineW = 36;      // HBM line address bits (40 - log2(16))
constexpr unsigned kAddrW = 12;       // SBUF byte address bits (tiny)
constexpr unsigned kMaxCredit = 4;    // credits an engine holds at most (ncore_dma_engine)
constexpr unsigned kNoiseBytes = 256; // end of every partition: only the other SBUF traffic writes here

enum class CeMode { high, divider, random };
inline const char* to_string(CeMode m) {
  return m == CeMode::high ? "ce=1" : m == CeMode::divider ? "ce from ncore_clk_en" : "random ce";
}

struct Config {
  CeMode ce = CeMode::high;
  unsigned lat_lo = 4, lat_hi = 4;  // HBM latency in clocks, per request
  unsigned credit_pct = 100;        // chance of a credit per engine per clock (HBM bandwidth)
  bool noise = false;               // other traffic on the SBUF's engine ports
};


// One transfer, from hand-over to completion.
struct Xfer {
  ncore::isa::Insn insn;
  uint64_t id = 0;               // issue order
  unsigned queue = 0;
  uint64_t accept_clock = 0;     // edge that took it
  uint64_t accept_ce = 0;        // DMA cycles (enable high) before that edge
  uint64_t done_clock = 0;       // edge after which all engines had pulsed done
  uint64_t done_ce = 0;
  std::array<unsigned, kE> dones{};
  std::array<uint64_t, kE> done_at{};  // clock of each engine's pulse
  unsigned rd_starts = 0;
  bool complete = false;
};

class Bench {
 public:
  static constexpr uint64_t kHbmBytes = 128 * 1024;

  explicit Bench(uint64_t seed) : golden_(tiny(), kHbmBytes), hbm_(kHbmBytes, 0), rng_(seed) {
    dut_->ce_i = 1;
    set_zero(dut_->ce_sel_i, dut_->insn_valid_i, dut_->hq_credit_i, dut_->hr_valid_i, dut_->ha_valid_i, dut_->er_req_i,
             dut_->ew_req_i);
    dut_.reset();
  }

  void configure(const Config& c) {
    cfg_ = c;
    dut_->ce_sel_i = c.ce == CeMode::divider;
    if (!c.noise) {  // a noise request not granted yet never happens
      noise_rd_ = noise_wr_ = false;
      dut_->er_req_i = 0;
      dut_->ew_req_i = 0;
    }
  }
  const Config& config() const { return cfg_; }
  ncore::GoldenModel& golden() { return golden_; }
  std::vector<uint8_t>& hbm() { return hbm_; }

  // The same bytes in the RTL's memories and the golden model's.
  void load(const std::vector<uint8_t>& sbuf, const std::vector<uint8_t>& hbm) {
    const auto& mem = dut_.memory("ncore_dma_tb.u_sbuf.u_mem");
    const unsigned bytes = unsigned(tiny().sbuf_bytes);
    for (unsigned p = 0; p < kP; ++p) {
      std::memcpy(mem.row(p), sbuf.data() + size_t{p} * bytes, bytes);
      std::memcpy(golden_.sbuf(p), sbuf.data() + size_t{p} * bytes, bytes);
    }
    hbm_ = hbm;
    std::memcpy(golden_.hbm(), hbm.data(), kHbmBytes);
  }

  // Queues a transfer for hand-over (in order, each when its queue is free).
  void submit(const ncore::isa::Insn& insn) { waiting_.push_back(insn); }
  bool idle() const {
    if (!waiting_.empty()) return false;
    for (const auto& a : active_)
      if (a) return false;
    return true;
  }
  // Transfers handed over and not yet complete, by queue (nullptr: none).
  const Xfer* active(unsigned q) const { return active_[q].get(); }
  size_t waiting() const { return waiting_.size(); }

  // Called when a transfer completes (after its golden check).
  std::function<void(const Xfer&)> on_complete;

  // One clock. False after a failed check (error() says which).
  bool cycle() {
    if (!error_.empty()) return false;
    // ---- inputs ----
    set_ce();
    dut_->insn_valid_i = 0;
    int taking = -1;
    if (!waiting_.empty()) {
      const unsigned q = waiting_.front().dma_queue;
      if (get_bits(dut_->q_free_o, q, 1) && !active_[q]) {
        put_insn(*dut_, waiting_.front());
        taking = int(q);
      }
    }
    uint32_t give = 0, rv = 0, av = 0;
    for (unsigned e = 0; e < kE; ++e) {
      if (credits_[e] < kMaxCredit && rng_() % 100 < cfg_.credit_pct) give |= 1u << e;
      if (!reads_[e].empty() && reads_[e].front().due <= clock_) {
        for (unsigned w = 0; w < 4; ++w) {
          uint32_t v;
          std::memcpy(&v, reads_[e].front().data.data() + 4 * w, 4);
          put_bits(dut_->hr_rdata_i, e * 128 + 32 * w, 32, v);
        }
        rv |= 1u << e;
      }
      if (!acks_[e].empty() && acks_[e].front() <= clock_) av |= 1u << e;
    }
    dut_->hq_credit_i = give;
    dut_->hr_valid_i = rv;
    dut_->ha_valid_i = av;
    if (cfg_.noise) noise_inputs();
    dut_->eval();

    // ---- what happens at this edge ----
    const bool ce = dut_->ce_o;
    const uint32_t hv = uint32_t(get_bits(dut_->hq_valid_o, 0, kE)), we = uint32_t(get_bits(dut_->hq_we_o, 0, kE));
    for (unsigned e = 0; e < kE; ++e) {
      const bool valid = (hv >> e) & 1;
      if (valid && credits_[e] == 0) return fail("engine " + std::to_string(e) + " sent an HBM request without a credit");
      if (valid && !hbm_request(e, (we >> e) & 1)) return false;
      credits_[e] = credits_[e] + (((give >> e) & 1) && credits_[e] != kMaxCredit) - valid;
      if ((rv >> e) & 1) reads_[e].pop_front();
      if ((av >> e) & 1) acks_[e].pop_front();
    }
    if (cfg_.noise) noise_grants();
    if (!check_ownership()) return false;
    if (taking >= 0) {
      auto x = std::make_unique<Xfer>();
      x->insn = waiting_.front();
      x->id = next_id_++;
      x->queue = unsigned(taking);
      x->accept_clock = clock_;
      x->accept_ce = ce_cycles_;
      active_[taking] = std::move(x);
      waiting_.pop_front();
    }
    dut_.edge();
    ++clock_;
    ce_cycles_ += ce;

    // ---- outputs after the edge ----
    for (unsigned q = 0; q < kQ; ++q) {
      Xfer* x = active_[q].get();
      const bool rs = get_bits(dut_->rd_start_o, q, 1);
      if (rs) {
        if (!x || x->accept_clock + 1 != clock_)
          return fail("queue " + std::to_string(q) + ": rd_start pulse not in the cycle after a transfer was taken");
        ++x->rd_starts;
      } else if (x && x->accept_clock + 1 == clock_) {
        return fail("queue " + std::to_string(q) + ": no rd_start pulse after the transfer was taken");
      }
      for (unsigned e = 0; e < kE; ++e) {
        if (!get_bits(dut_->done_o, q * kE + e, 1)) continue;
        if (!x || x->complete)
          return fail("queue " + std::to_string(q) + ": engine " + std::to_string(e) + " pulsed done with no transfer");
        if (++x->dones[e] > 1)
          return fail("queue " + std::to_string(q) + ": engine " + std::to_string(e) + " pulsed done twice for one transfer");
        x->done_at[e] = clock_;
      }
      const bool free = get_bits(dut_->q_free_o, q, 1);
      if (!x) {
        if (!free) return fail("queue " + std::to_string(q) + " is not free and holds no transfer");
        continue;
      }
      bool all = true;
      for (unsigned e = 0; e < kE; ++e) all = all && x->dones[e] == 1;
      if (!x->complete && free && x->accept_clock + 1 <= clock_ && !all)
        return fail("queue " + std::to_string(q) + ": slot free before every engine pulsed done");
      if (all && !x->complete) {
        x->complete = true;
        x->done_clock = clock_;
        x->done_ce = ce_cycles_;
        if (!check_transfer(*x)) return false;
        if (on_complete) on_complete(*x);
        if (!error_.empty()) return false;
      }
      if (x->complete) {
        if (free) active_[q].reset();
        else if (clock_ > x->done_clock + 1)
          return fail("queue " + std::to_string(q) + ": slot still taken after every engine pulsed done");
      } else if (clock_ - x->accept_clock > timeout_) {
        return fail("queue " + std::to_string(q) + ": transfer not done after " + std::to_string(timeout_) + " clocks: " +
                    ncore::format_insn(x->insn));
      }
    }
    return true;
  }

  // Runs until every submitted transfer is complete and HBM is quiet, then compares the whole
  // SBUF and HBM with the golden model.
  bool drain() {
    uint64_t guard = 0;
    while (!idle() || !hbm_quiet()) {
      if (!cycle()) return false;
      if (++guard > timeout_) return fail("drain: still busy after " + std::to_string(timeout_) + " clocks");
    }
    for (int k = 0; k < 8; ++k)
      if (!cycle()) return false;  // nothing may move any more
    return compare_all();
  }

  // Compares the whole SBUF and HBM with the golden model, except the bytes marked in `skip_sbuf`
  // ([partition * sbuf_bytes + byte]) and `skip_hbm` (transfers still in flight write there).
  bool compare_all(const std::vector<bool>* skip_sbuf = nullptr, const std::vector<bool>* skip_hbm = nullptr,
                   const std::string& when = "") {
    const auto& mem = dut_.memory("ncore_dma_tb.u_sbuf.u_mem");
    const unsigned bytes = unsigned(tiny().sbuf_bytes);
    for (unsigned p = 0; p < kP; ++p)
      for (unsigned w = 0; w < bytes / 4; ++w) {
        uint32_t g;
        std::memcpy(&g, golden_.sbuf(p) + 4 * w, 4);
        const uint32_t r = mem.word(p, w);
        if (g == r) continue;
        for (unsigned b = 0; b < 4; ++b) {
          if (((g ^ r) >> (8 * b)) & 0xFF && !(skip_sbuf && (*skip_sbuf)[size_t{p} * bytes + 4 * w + b])) {
            std::ostringstream s;
            s << "SBUF partition " << p << " byte 0x" << std::hex << 4 * w + b << ": golden 0x" << ((g >> (8 * b)) & 0xFF)
              << ", RTL 0x" << ((r >> (8 * b)) & 0xFF) << when;
            return fail(s.str());
          }
        }
      }
    for (uint64_t a = 0; a < kHbmBytes; ++a)
      if (hbm_[a] != golden_.hbm()[a] && !(skip_hbm && (*skip_hbm)[a])) {
        std::ostringstream s;
        s << "HBM byte 0x" << std::hex << a << ": golden 0x" << unsigned(golden_.hbm()[a]) << ", RTL 0x"
          << unsigned(hbm_[a]) << when;
        return fail(s.str());
      }
    return true;
  }

  const std::string& error() const { return error_; }
  uint64_t clock() const { return clock_; }
  uint64_t ce_cycles() const { return ce_cycles_; }
  // The block's counter: clocks in which some engine generated a descriptor.
  uint64_t desc_cycles() const { return dut_->perf_desc_cycles_o; }
  uint64_t hbm_read_lines() const { return hbm_reads_; }
  uint64_t hbm_write_lines() const { return hbm_writes_; }
  uint64_t sbuf_read_lines() const { return sr_grants_; }
  uint64_t sbuf_write_lines() const { return sw_grants_; }
  uint64_t noise_grants_total() const { return noise_grants_; }
  void set_timeout(uint64_t t) { timeout_ = t; }

 private:
  struct Pending {
    uint64_t due;
    std::array<uint8_t, kLineB> data;
  };

  bool fail(const std::string& what) {
    if (error_.empty()) error_ = "clock " + std::to_string(clock_) + ": " + what;
    return false;
  }

  void set_ce() {
    if (cfg_.ce == CeMode::random) dut_->ce_i = rng_() % 2;
    else dut_->ce_i = 1;
  }

  bool hbm_quiet() const {
    for (unsigned e = 0; e < kE; ++e)
      if (!reads_[e].empty() || !acks_[e].empty()) return false;
    return true;
  }

  uint64_t latency() { return cfg_.lat_lo + rng_() % (cfg_.lat_hi - cfg_.lat_lo + 1); }

  bool hbm_request(unsigned e, bool write) {
    const uint64_t line = get_bits(dut_->hq_line_o, e * kHLineW, kHLineW);
    const uint64_t addr = line * kLineB;
    if (addr + kLineB > kHbmBytes) {
      std::ostringstream s;
      s << "engine " << e << " addressed HBM line at byte 0x" << std::hex << addr << ", outside the HBM";
      return fail(s.str());
    }
    // in order per engine: never due before the one ahead of it
    if (write) {
      const uint32_t ben = uint32_t(get_bits(dut_->hq_ben_o, e * kLineB, kLineB));
      for (unsigned b = 0; b < kLineB; ++b)
        if ((ben >> b) & 1) hbm_[addr + b] = uint8_t(get_bits(dut_->hq_wdata_o, e * 128 + 8 * b, 8));
      uint64_t due = clock_ + latency();
      if (!acks_[e].empty()) due = std::max(due, acks_[e].back());
      acks_[e].push_back(due);
      ++hbm_writes_;
    } else {
      Pending pd;
      pd.due = clock_ + latency();
      if (!reads_[e].empty()) pd.due = std::max(pd.due, reads_[e].back().due);
      std::memcpy(pd.data.data(), hbm_.data() + addr, kLineB);
      reads_[e].push_back(pd);
      ++hbm_reads_;
    }
    return true;
  }

  // Other SBUF traffic: an engine read anywhere, an engine write into the noise region.
  void noise_inputs() {
    const unsigned bytes = unsigned(tiny().sbuf_bytes);
    if (!noise_rd_ && rng_() % 2) {
      noise_rd_ = true;
      dut_->er_addr_i = uint32_t(rng_() % bytes) & ~3u;
      dut_->er_mask_i = uint16_t(rng_());
    }
    if (!noise_wr_ && rng_() % 3 == 0) {
      noise_wr_ = true;
      dut_->ew_addr_i = uint32_t(bytes - kNoiseBytes + rng_() % kNoiseBytes) & ~3u;
      dut_->ew_mask_i = uint16_t(rng_());
      dut_->ew_ben_i = uint8_t(1 + rng_() % 15);
      for (unsigned p = 0; p < kP; ++p) dut_->ew_wdata_i[p] = uint32_t(rng_());
    }
    dut_->er_req_i = noise_rd_;
    dut_->ew_req_i = noise_wr_;
  }

  void noise_grants() {
    if (noise_rd_ && dut_->er_gnt_o) {
      noise_rd_ = false;
      ++noise_grants_;
    }
    if (noise_wr_ && dut_->ew_gnt_o) {
      noise_wr_ = false;
      ++noise_grants_;
      for (unsigned p = 0; p < kP; ++p) {
        if (!((dut_->ew_mask_i >> p) & 1)) continue;
        for (unsigned j = 0; j < 4; ++j)
          if ((dut_->ew_ben_i >> j) & 1) golden_.sbuf(p)[dut_->ew_addr_i + j] = uint8_t(dut_->ew_wdata_i[p] >> (8 * j));
      }
    }
  }

  // Rows are split over the engines by the SBUF side's partition: engine e owns partitions
  // [e * P/E, (e+1) * P/E). So every SBUF write of engine e is to its own partitions, and so is
  // every SBUF read unless an SBUF->SBUF transfer is in flight (whose source rows follow the
  // destination's owner).
  bool check_ownership() {
    const uint32_t rg = uint32_t(get_bits(dut_->sr_gnt_o, 0, kE)), wg = uint32_t(get_bits(dut_->sw_gnt_o, 0, kE));
    sr_grants_ += __builtin_popcount(rg);
    sw_grants_ += __builtin_popcount(wg);
    bool s2s = false;
    for (const auto& a : active_)
      if (a && a->insn.src0.mem == ncore::isa::Buffer::sbuf && a->insn.dst.mem == ncore::isa::Buffer::sbuf) s2s = true;
    constexpr unsigned kPartW = 4, kPpe = kP / kE;
    for (unsigned e = 0; e < kE; ++e) {
      const unsigned wp = unsigned(get_bits(dut_->sw_part_o, e * kPartW, kPartW));
      const unsigned rp = unsigned(get_bits(dut_->sr_part_o, e * kPartW, kPartW));
      if (((wg >> e) & 1) && wp / kPpe != e)
        return fail("engine " + std::to_string(e) + " wrote SBUF partition " + std::to_string(wp) + ", not one of its own");
      if (((rg >> e) & 1) && !s2s && rp / kPpe != e)
        return fail("engine " + std::to_string(e) + " read SBUF partition " + std::to_string(rp) + ", not one of its own");
    }
    return true;
  }

  // The golden model executes the transfer; its destination must match the RTL's memory.
  bool check_transfer(const Xfer& x) {
    golden_.execute(x.insn);
    const ncore::isa::Ap& d = x.insn.dst;
    auto expected = [&](uint32_t part, int64_t addr, unsigned n) { return golden_.read_bits(d.mem, part, addr, n); };
    const auto& sbuf_mem = dut_.memory("ncore_dma_tb.u_sbuf.u_mem");
    auto actual = [&](uint32_t part, int64_t addr, unsigned n) -> uint32_t {
      uint32_t v = 0;
      if (d.mem == ncore::isa::Buffer::hbm) {
        std::memcpy(&v, hbm_.data() + addr, n);
      } else {
        const uint32_t word = sbuf_mem.word(part, uint64_t(addr) / 4);
        v = ncore::num::elem_of_word(word, addr, n);
      }
      return v;
    };
    if (auto mm = ncore::first_mismatch(d, expected, actual)) {
      std::ostringstream s;
      s << "transfer " << x.id << " on queue " << x.queue << " done, but its destination differs from the golden model\n  "
        << ncore::format_insn(x.insn) << "\n  first at element " << mm->index << " (partition " << mm->partition
        << ", byte 0x" << std::hex << mm->byte_addr << "): golden 0x" << mm->expected_bits << ", RTL 0x"
        << mm->actual_bits;
      return fail(s.str());
    }
    return true;
  }

  Dut<Vncore_dma_tb> dut_;
  ncore::GoldenModel golden_;
  std::vector<uint8_t> hbm_;
  std::mt19937_64 rng_;
  Config cfg_;
  std::deque<ncore::isa::Insn> waiting_;
  std::array<std::unique_ptr<Xfer>, kQ> active_{};
  std::array<unsigned, kE> credits_{};
  std::array<std::deque<Pending>, kE> reads_;
  std::array<std::deque<uint64_t>, kE> acks_;
  bool noise_rd_ = false, noise_wr_ = false;
  uint64_t clock_ = 0, ce_cycles_ = 0, next_id_ = 0;
  uint64_t hbm_reads_ = 0, hbm_writes_ = 0, sr_grants_ = 0, sw_grants_ = 0, noise_grants_ = 0;
  uint64_t timeout_ = 400000;
  std::string error_;
};

}  // namespace dma_tb
