// The C++ side of the RTL's trace interface: how the simulator and the unit benches see the
// SBUF's and the PSUM's storage without Verilator's internal names.
//
// Each memory registers itself once, at time 0, through a DPI-C import it calls from an
// initial block (ncore_prim_banked_mem.sv, the storage of ncore_sbuf.sv and ncore_psum.sv):
//     initial ncore_trace_memory("mem_q", mem_q);
// The import passes the array by reference (an open array handle), so the registry keeps
// pointers to the storage itself; it is keyed by the instance's SystemVerilog scope (for
// example "ncore_trn2.ncore_top.u_sbuf.u_mem"), so several Verilated models in one binary, which share
// the one C definition of the import, stay apart. The performance counters come out through
// ports (ncore_top's perf_*_o), not through this registry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ncore::rtl {

// One registered memory: rows (partitions) of 32-bit words, each row contiguous.
class TracedMemory {
 public:
  unsigned rows() const { return static_cast<unsigned>(rows_.size()); }
  uint64_t words() const { return words_; }
  uint32_t word(unsigned row, uint64_t w) const { return rows_[row][w]; }
  uint32_t* row(unsigned r) const { return rows_[r]; }
  // Zeroes every word (the memories' state at the start of a run; the RTL's other state resets
  // through rst_ni).
  void clear() const;

  // Registration (the DPI import): the rows of the array and their length.
  void assign(std::vector<uint32_t*> rows, uint64_t words);

 private:
  std::vector<uint32_t*> rows_;
  uint64_t words_ = 0;
};

// The memory `var` that the instance at SystemVerilog scope `scope` registered; throws
// std::runtime_error, naming what is registered, if there is none. The reference stays valid
// for the program's life (a model built again at the same scope registers into the same entry).
const TracedMemory& traced_memory(const std::string& scope, const std::string& var = "mem_q");

}  // namespace ncore::rtl
