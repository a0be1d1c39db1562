// The Verilated core as the (model-independent) SystemC top sees it: the parts of ncore_top
// whose types depend on the model (the DMA done bits and the HBM line buses, sized by the
// preset's engine and queue counts), the state and counters read from inside the RTL, and the
// waveform hooks. VerilatedRtl<T> (verilated_rtl.hpp) implements it for one Verilated model.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/core_sim.hpp"
#include "core/hbm_model.hpp"

class VerilatedFstC;

namespace ncore::sim {

class RtlModel {
 public:
  virtual ~RtlModel() = default;

  // dma_done_o after the edge: bit q * engines + e is engine e's done for queue q, in 32-bit
  // words (out holds (queues * engines + 31) / 32 of them).
  virtual void dma_done(uint32_t* out) const = 0;
  // The line, byte enables and (for a write) data engine e requests at this edge.
  virtual void hbm_request(unsigned e, bool write, HbmRequest& r) const = 0;
  // Read data for engine e in the coming cycle; drive_read_data() puts them all on hr_rdata_i.
  virtual void set_read_data(unsigned e, const std::array<uint8_t, kLineBytes>& line) = 0;
  virtual void drive_read_data() = 0;

  // A new run: the memories to zero (the golden model's start) and the read data cleared; the
  // rest of the RTL resets through rst_ni.
  virtual void reset() = 0;

  // Inside the RTL (rtl_state.hpp): memory words, and the performance counters into the
  // result's sbuf_*, psum_* and pe_* fields.
  virtual uint32_t sbuf_word(unsigned p, uint64_t word) const = 0;
  virtual uint32_t psum_word(unsigned p, uint64_t word) const = 0;
  virtual void read_counters(RunResult& r) const = 0;
  // The DMA's descriptor counter now: clock cycles in which some DMA engine generated a
  // descriptor, since reset (read every cycle for the time breakdown).
  virtual uint64_t dma_desc_cycles() const = 0;

  // Waveforms: the model's signals into `fst`, and its top-level SystemC name (ncore_trn2).
  virtual void trace(VerilatedFstC& fst) = 0;
  virtual std::string name() const = 0;
};

}  // namespace ncore::sim
