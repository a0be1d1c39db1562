// The port binding of one Verilated model, the only part of the SystemC top that depends on the
// model's class: its ports bound to the core's signals (core_pins.hpp) and to buses of the
// model's widths, behind the RtlModel interface the core uses. Included by one small .cpp per
// Verilated model (core_trn2.cpp, ...), with T a traits struct naming the model's class
// (T::Model), the preset it was Verilated for (T::kPreset; the port widths follow from its
// numbers in ncore_presets.json) and its thread count.
#pragma once

#include <systemc.h>
#include <verilated_fst_c.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <type_traits>

#include <fmt/format.h>

#include <string>

#include "core/core_pins.hpp"
#include "core/core_top.hpp"
#include "core/rtl_model.hpp"
#include "core/rtl_state.hpp"
#include "ncore/error.hpp"
#include "trace/rtl_assert.hpp"

namespace ncore::sim {

namespace detail {
// Bits [lsb, lsb + width) of a bit vector, width <= 64.
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
// The C++ type of a Verilated SystemC port of W >= 2 bits: uint32_t up to 32 bits, uint64_t up
// to 64, sc_bv above (the small preset's DMA done and byte-enable buses fit a word).
template <int W>
using port_t = std::conditional_t<(W > 64), sc_bv<W>, std::conditional_t<(W > 32), uint64_t, uint32_t>>;
inline uint64_t port_bits(const sc_bv_base& bv, unsigned lsb, unsigned width) { return bv_bits(bv, lsb, width); }
inline uint64_t port_bits(uint64_t v, unsigned lsb, unsigned width) {
  v = lsb >= 64 ? 0 : v >> lsb;
  return width >= 64 ? v : v & ((1ull << width) - 1);
}
}  // namespace detail

constexpr int log2_exact(uint64_t v) { return v <= 1 ? 0 : 1 + log2_exact(v / 2); }

// The numbers of the preset a Verilated model was built for.
template <class T>
struct ModelPreset {
  static constexpr const Preset* kPreset = find_builtin_preset(T::kPreset);
  static_assert(kPreset != nullptr, "the traits name a preset of ncore_presets.json");
  static constexpr int kEngines = static_cast<int>(kPreset->dma_engines);
  static constexpr int kQueues = static_cast<int>(kPreset->dma_queues);
  static constexpr int kHbmAddrBits = static_cast<int>(kPreset->hbm_addr_bits);
};

template <class T>
class VerilatedRtl final : public RtlModel {
  static constexpr int kEngines = ModelPreset<T>::kEngines;
  static constexpr int kQueues = ModelPreset<T>::kQueues;
  static_assert(kEngines <= 32 && kQueues <= 32, "per-engine and per-queue masks are uint32_t (core_pins.hpp)");

 public:
  // Port widths of the Verilated top (sc_bv sizes).
  static constexpr int kLineAddrBits = ModelPreset<T>::kHbmAddrBits - log2_exact(kLineBytes);  // HBM line address bits
  static constexpr int kLineBits = kEngines * kLineAddrBits;
  static constexpr int kBenBits = kEngines * kLineBytes;
  static constexpr int kRdataBits = kEngines * kLineBytes * 8;
  static constexpr int kDoneBits = kQueues * kEngines;

  VerilatedRtl(typename T::Model* model, CorePins& p, const Preset& preset)
      : m_(model), state_(model->name(), preset) {
    m_->clk_i(p.clk);
    m_->rst_ni(p.rst_n);
    m_->dve_valid_i(p.dve.valid);
    m_->dve_insn_i(p.dve.insn);
    m_->dve_ready_o(p.dve.ready);
    m_->dve_rd_start_o(p.dve.rd_start);
    m_->dve_done_o(p.dve.done);
    m_->act_valid_i(p.act.valid);
    m_->act_insn_i(p.act.insn);
    m_->act_ready_o(p.act.ready);
    m_->act_rd_start_o(p.act.rd_start);
    m_->act_done_o(p.act.done);
    m_->pe_valid_i(p.pe.valid);
    m_->pe_insn_i(p.pe.insn);
    m_->pe_ls_ready_o(p.pe.ls_ready);
    m_->pe_mm_ready_o(p.pe.mm_ready);
    m_->pe_accept_o(p.pe.accept);
    m_->pe_ls_start_o(p.pe.ls_start);
    m_->pe_mm_start_o(p.pe.mm_start);
    m_->pe_ls_done_o(p.pe.ls_done);
    m_->pe_mm_done_o(p.pe.mm_done);
    m_->dma_valid_i(p.dma.valid);
    m_->dma_insn_i(p.dma.insn);
    m_->dma_q_free_o(p.dma.q_free);
    m_->dma_rd_start_o(p.dma.rd_start);
    m_->dma_done_o(dma_done_);
    m_->hq_valid_o(p.hbm.req_valid);
    m_->hq_credit_i(p.hbm.credit);
    m_->hq_we_o(p.hbm.req_we);
    m_->hq_line_o(hq_line_);
    m_->hq_ben_o(hq_ben_);
    m_->hq_wdata_o(hq_wdata_);
    m_->hr_valid_i(p.hbm.rd_valid);
    m_->hr_rdata_i(hr_rdata_);
    m_->ha_valid_i(p.hbm.ack_valid);
    m_->busy_o(p.busy);
    m_->ce_o(p.ce);
    m_->perf_sbuf_rd_bytes_o(state_.sbuf_rd_bytes);
    m_->perf_sbuf_wr_bytes_o(state_.sbuf_wr_bytes);
    m_->perf_psum_rd_bytes_o(state_.psum_rd_bytes);
    m_->perf_psum_wr_bytes_o(state_.psum_wr_bytes);
    m_->perf_pe_macs_o(state_.pe_macs);
    m_->perf_pe_busy_o(state_.pe_busy);
    m_->perf_dma_desc_o(state_.dma_desc);
  }

  void dma_done(uint32_t* out) const override {
    const auto& v = dma_done_.read();
    for (int w = 0; w < (kDoneBits + 31) / 32; ++w)
      out[w] = static_cast<uint32_t>(detail::port_bits(v, 32 * w, std::min(32, kDoneBits - 32 * w)));
  }

  void hbm_request(unsigned e, bool write, HbmRequest& r) const override {
    r.write = write;
    r.line = detail::port_bits(hq_line_.read(), e * kLineAddrBits, kLineAddrBits);
    r.ben = static_cast<uint16_t>(detail::port_bits(hq_ben_.read(), e * kLineBytes, kLineBytes));
    if (!write) return;
    const auto& wdata = hq_wdata_.read();
    for (unsigned w = 0; w < kLineBytes / 4; ++w) {
      const uint32_t word = wdata.get_word(static_cast<int>(e * kLineBytes / 4 + w));
      std::memcpy(r.data.data() + 4 * w, &word, 4);
    }
  }

  void set_read_data(unsigned e, const std::array<uint8_t, kLineBytes>& line) override {
    for (unsigned w = 0; w < kLineBytes / 4; ++w) {
      uint32_t word;
      std::memcpy(&word, line.data() + 4 * w, 4);
      rdata_.set_word(static_cast<int>(e * kLineBytes / 4 + w), word);
    }
  }
  void drive_read_data() override { hr_rdata_.write(rdata_); }

  void reset() override {
    state_.clear_memories();
    rdata_ = 0;
  }

  uint32_t sbuf_word(unsigned p, uint64_t word) const override { return state_.sbuf_word(p, word); }
  uint32_t psum_word(unsigned p, uint64_t word) const override { return state_.psum_word(p, word); }
  void read_counters(RunResult& r) const override { state_.read_counters(r); }
  uint64_t dma_desc_cycles() const override { return state_.dma_desc.read(); }

  void trace(VerilatedFstC& fst) override { m_->trace(&fst, 99); }
  std::string name() const override { return m_->name(); }

  // The model's final blocks before it goes (the fast PE array frees its C++ state in one).
  ~VerilatedRtl() override { m_->final(); }

 private:
  std::unique_ptr<typename T::Model> m_;
  RtlState state_;
  sc_signal<detail::port_t<kDoneBits>> dma_done_{"dma_done"};
  sc_signal<detail::port_t<kLineBits>> hq_line_{"hq_line"};
  sc_signal<detail::port_t<kBenBits>> hq_ben_{"hq_ben"};
  sc_signal<sc_bv<kRdataBits>> hq_wdata_{"hq_wdata"}, hr_rdata_{"hr_rdata"};
  sc_bv<kRdataBits> rdata_;  // the read data being assembled for the coming cycle
};

// A preset's SystemC top level around a new Verilated core. The Verilated module is a top-level
// SystemC module named `rtl_name` (its trace scopes and the waves/ save files start there), the
// same for every thread count of a preset.
template <class T>
Core* make_core(const Preset& p, const char* rtl_name, const char* top_name) {
  if (p.dma_engines != ModelPreset<T>::kEngines || p.dma_queues != ModelPreset<T>::kQueues ||
      p.hbm_addr_bits != static_cast<uint64_t>(ModelPreset<T>::kHbmAddrBits))
    throw SimError(fmt::format("preset {} does not match the ports of its Verilated model", p.name));
  Verilated::traceEverOn(true);  // waveforms can be opened for any run
  rtl::keep_running_on_error();  // a $stop in the RTL ends the run with a SimError, not abort()
  auto* model = new typename T::Model(rtl_name);
  return new CoreTop(top_name, p, T::kThreads, [model](CorePins& pins, const Preset& preset) -> std::unique_ptr<RtlModel> {
    return std::make_unique<VerilatedRtl<T>>(model, pins, preset);
  });
}

}  // namespace ncore::sim
