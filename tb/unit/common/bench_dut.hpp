// What every unit bench does with its Verilated wrapper, written once: the model in its own
// context, reset and clock edges, an instruction on an engine's instruction port; and the small
// helpers the benches' messages and test lengths use.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "trace/rtl_assert.hpp"
#include "trace/rtl_trace.hpp"
#include "verilated.h"

namespace ncore::tb {

// The presets the benches build (the RTL takes the same numbers from ncore_cfg_pkg).
inline const Preset& tiny() { return *find_preset("tiny"); }
inline const Preset& trn2() { return *find_preset("trn2"); }

// A Verilated model M (ports clk_i and rst_ni) with its own VerilatedContext; `dut->port`
// reaches the model's ports. One model at a time per test: Verilator 5.006 unregisters a model's
// scopes through the thread's current context, the last one evaluated, so a model that outlives
// a later model's context hangs when it is destroyed.
template <class M>
class Dut {
 public:
  Dut() : ctx_(std::make_unique<VerilatedContext>()), m_(std::make_unique<M>(ctx_.get())) {
    ctx_->fatalOnError(false);  // a $stop in the RTL throws from edge() (below), not abort()
  }

  M* operator->() { return m_.get(); }
  const M* operator->() const { return m_.get(); }
  M& operator*() { return *m_; }
  const M& operator*() const { return *m_; }

  // The memory `var` that the RTL instance at `path` below the model's top (for example
  // "ncore_sbuf.u_mem") handed to the RTL's trace interface (sim/trace/rtl_trace.hpp), as the
  // simulator sees the SBUF and the PSUM: the benches preload and read the storage through it, not
  // through Verilator's internal names. The instance registers in an initial block, so a model not
  // evaluated yet is evaluated once first (its inputs as they are; no clock edge).
  const ncore::rtl::TracedMemory& memory(const std::string& path, const std::string& var = "mem_q") {
    if (!evaluated_) {
      m_->eval();
      evaluated_ = true;
    }
    return ncore::rtl::traced_memory("TOP." + path, var);
  }

  // Two edges with rst_ni low (the inputs as the bench has set them), then rst_ni released.
  void reset() {
    m_->clk_i = 0;
    m_->rst_ni = 0;
    m_->eval();
    evaluated_ = true;
    edge();
    edge();
    m_->rst_ni = 1;
    m_->eval();
  }

  // One rising edge, and the clock back low. An RTL assertion that failed at the edge (the benches'
  // models are Verilated with the assertions; sim/trace/rtl_assert.hpp) throws std::runtime_error with the edge's number (edges
  // since the model was built, reset's included) and the assertion's message.
  void edge() {
    m_->clk_i = 1;
    m_->eval();
    m_->clk_i = 0;
    m_->eval();
    ++edges_;
    if (ncore::rtl::assertion_failed()) throw std::runtime_error(ncore::rtl::assertion_report(edges_));
    if (ctx_->gotError()) {
      ctx_->gotError(false);
      throw std::runtime_error("the RTL stopped at edge " + std::to_string(edges_) + " ($stop or $error)");
    }
  }
  uint64_t edges() const { return edges_; }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<M> m_;
  uint64_t edges_ = 0;
  bool evaluated_ = false;
};

// `insn` encoded onto the model's instruction port insn_i (the ISA's bit layout, a VlWide of
// 32-bit words), valid raised.
template <class M>
void put_insn(M& m, const isa::Insn& insn) {
  uint8_t img[isa::kInsnBytes];
  isa::encode(insn, img);
  for (unsigned w = 0; w < (isa::kInsnBits + 31) / 32; ++w) {
    uint32_t v;
    std::memcpy(&v, img + 4 * w, 4);
    m.insn_i[w] = v;
  }
  m.insn_valid_i = 1;
}

// Each of a model's inputs `ports` driven to 0: how a bench holds its request and valid inputs
// idle through reset.
template <class... Port>
void set_zero(Port&... ports) {
  ((ports = 0), ...);
}

inline std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// Byte j of a little-endian 32-bit word.
inline void set_byte(uint32_t& w, unsigned j, uint8_t b) { w = (w & ~(0xFFu << (8 * j))) | (uint32_t{b} << (8 * j)); }

// A count from the environment (the long runs' lengths), else `dflt`.
inline uint64_t env_count(const char* name, uint64_t dflt) {
  const char* s = std::getenv(name);
  return s && *s ? std::strtoull(s, nullptr, 0) : dflt;
}

// Named counters of what a random run met, for the report and the coverage checks.
struct Tally {
  std::map<std::string, uint64_t> n;
  void add(const std::string& k, uint64_t v = 1) { n[k] += v; }
  std::string str() const {
    std::string s;
    for (const auto& [k, v] : n) s += "\n  " + k + ": " + std::to_string(v);
    return s;
  }
};

}  // namespace ncore::tb
