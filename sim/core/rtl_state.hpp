// The one place that reads the RTL's state through Verilator's internal names
// (rootp->ncore_top__DOT__...): the SBUF and PSUM memories (cleared at reset, read by check mode
// and the test benches) and the performance counters. Confined here so that a trace interface
// bound into the RTL can replace it without touching the core.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/rtl_model.hpp"
#include "ncore/presets_gen.hpp"

namespace ncore::sim {

template <class Model>
class RtlState {
 public:
  RtlState(Model& model, const Preset& preset) : m_(model), preset_(preset) {}

  uint32_t sbuf_word(unsigned p, uint64_t word) const { return m_.rootp->ncore_top__DOT__u_sbuf__DOT__mem_q[p][word]; }
  uint32_t psum_word(unsigned p, uint64_t word) const { return m_.rootp->ncore_top__DOT__u_psum__DOT__mem_q[p][word]; }

  // Memories to zero (the golden model's start); the rest of the state resets through rst_ni.
  void clear_memories() {
    auto& mem = m_.rootp->ncore_top__DOT__u_sbuf__DOT__mem_q;
    for (unsigned p = 0; p < preset_.num_partitions; ++p) std::memset(&mem[p][0], 0, preset_.sbuf_bytes);
    auto& pmem = m_.rootp->ncore_top__DOT__u_psum__DOT__mem_q;
    for (unsigned p = 0; p < preset_.num_partitions; ++p) std::memset(&pmem[p][0], 0, preset_.psum_bytes);
  }

  // ncore_sbuf.sv, ncore_psum.sv and ncore_te.sv say how each counts.
  void read_counters(RunResult& res) const {
    const auto* r = m_.rootp;
    res.sbuf_read_bytes = r->ncore_top__DOT__u_sbuf__DOT__perf_rd_bytes_q;
    res.sbuf_write_bytes = r->ncore_top__DOT__u_sbuf__DOT__perf_wr_bytes_q;
    res.psum_read_bytes = r->ncore_top__DOT__u_psum__DOT__perf_rd_bytes_q;
    res.psum_write_bytes = r->ncore_top__DOT__u_psum__DOT__perf_wr_bytes_q;
    res.te_macs = r->ncore_top__DOT__u_te__DOT__perf_macs_q;
    res.te_array_busy_cycles = r->ncore_top__DOT__u_te__DOT__perf_busy_q;
  }

 private:
  Model& m_;
  const Preset& preset_;
};

}  // namespace ncore::sim
