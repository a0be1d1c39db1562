// What the core reads of the RTL's state besides its ports' protocol: the SBUF and PSUM storage
// (cleared at the start of a run, read by check mode and the report), through the RTL's trace
// interface (trace/rtl_trace.hpp: each memory registers itself under its SystemVerilog scope),
// and the performance counters, which ncore_top drives on its perf_*_o ports.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <string>

#include "core/rtl_model.hpp"
#include "ncore/error.hpp"
#include "ncore/presets_gen.hpp"
#include "trace/rtl_trace.hpp"

namespace ncore::sim {

class RtlState {
 public:
  // `model_name` is the Verilated model's SystemC name, the root of its instances' scopes.
  RtlState(std::string model_name, const Preset& preset) : model_(std::move(model_name)), preset_(preset) {}

  uint32_t sbuf_word(unsigned p, uint64_t word) const { return sbuf().word(p, word); }
  uint32_t psum_word(unsigned p, uint64_t word) const { return psum().word(p, word); }

  // Memories to zero (the golden model's start); the rest of the state resets through rst_ni.
  void clear_memories() const {
    sbuf().clear();
    psum().clear();
  }

  // The counters' ports, bound by the model's port binding.
  sc_signal<uint64_t> sbuf_rd_bytes{"perf_sbuf_rd_bytes"}, sbuf_wr_bytes{"perf_sbuf_wr_bytes"};
  sc_signal<uint64_t> psum_rd_bytes{"perf_psum_rd_bytes"}, psum_wr_bytes{"perf_psum_wr_bytes"};
  sc_signal<uint64_t> pe_macs{"perf_pe_macs"}, pe_busy{"perf_pe_busy"};
  sc_signal<uint64_t> dma_desc{"perf_dma_desc"};

  void read_counters(RunResult& res) const {
    res.sbuf_read_bytes = sbuf_rd_bytes.read();
    res.sbuf_write_bytes = sbuf_wr_bytes.read();
    res.psum_read_bytes = psum_rd_bytes.read();
    res.psum_write_bytes = psum_wr_bytes.read();
    res.pe_macs = pe_macs.read();
    res.pe_array_busy_cycles = pe_busy.read();
    res.dma_desc_cycles = dma_desc.read();
  }

 private:
  // The memories, found once (after the model's time-0 evaluation registered them) and checked
  // against the preset.
  const rtl::TracedMemory& sbuf() const {
    if (!sbuf_) sbuf_ = &find("u_sbuf.u_mem", preset_.sbuf_bytes / 4);
    return *sbuf_;
  }
  const rtl::TracedMemory& psum() const {
    if (!psum_) psum_ = &find("u_psum.u_mem", preset_.psum_bytes / 4);
    return *psum_;
  }
  const rtl::TracedMemory& find(const char* instance, uint64_t words) const {
    const auto& m = rtl::traced_memory(model_ + ".ncore_top." + instance);
    if (m.rows() != preset_.num_partitions || m.words() != words)
      throw SimError(fmt::format("the RTL's {} has {} x {} words, but preset {} describes {} x {}", instance, m.rows(),
                                 m.words(), preset_.name, preset_.num_partitions, words));
    return m;
  }

  std::string model_;
  const Preset& preset_;
  mutable const rtl::TracedMemory* sbuf_ = nullptr;
  mutable const rtl::TracedMemory* psum_ = nullptr;
};

}  // namespace ncore::sim
