// Helpers shared by the tensor-engine API tests (test_pe_lowering.cpp, test_pe_constraints.cpp):
// tracing a body for trn2, the error it raises, one stream's instructions.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "exec_check.hpp"
#include "ncore/program.hpp"
#include "nki/nki.hpp"

namespace pe_test {

namespace isa = ncore::isa;
namespace nl = nki::nl;
namespace nisa = nki::nisa;
using nki::Tensor;
using Op = isa::Opcode;
using fwtest::alloc_error;
using fwtest::call_error;
using fwtest::Tile;
using fwtest::Tiles;

inline const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

inline const unsigned kPe = ncore::Program::stream_index(isa::Engine::pe, 0);
inline const unsigned kDve = ncore::Program::stream_index(isa::Engine::dve, 0);

inline ncore::Program run(const std::function<void(nki::Tracer&)>& body, nki::TraceOptions o = {}) {
  return nki::trace("test", trn2(), body, o);
}

inline std::string error_of(const std::function<void(nki::Tracer&)>& body) { return fwtest::trace_error(body); }

// The kernel input `name` copied by DMA into a new SBUF tile named `tile`, of the same shape and dtype.
inline Tensor sbuf_input(nki::Tracer& t, const std::string& name, const nki::Shape& shape, nki::Dtype dtype,
                         const std::string& tile) {
  Tensor in = t.input(name, shape, dtype);
  Tensor s = nl::ndarray(shape, dtype, nl::sbuf, tile);
  nisa::dma_copy(s, in);
  return s;
}

// The "file:line: " prefix of an error raised at `line` of the test file `file` (__FILE__), with
// the path from the repository's root as the tracer reports it.
inline std::string at_line(std::string_view file, int line) {
  const size_t p = file.rfind("tests/firmware/");
  return fmt::format("{}:{}: ", p == std::string_view::npos ? file : file.substr(p), line);
}

// The instructions of one stream without the inserted sem_waits.
inline std::vector<isa::Insn> insns(const ncore::Program& p, unsigned stream) {
  std::vector<isa::Insn> v;
  for (const auto& i : p.streams[stream].insns)
    if (i.insn.opcode != isa::Opcode::sem_wait) v.push_back(i.insn);
  return v;
}

inline std::vector<isa::Opcode> opcodes(const ncore::Program& p, unsigned stream) {
  std::vector<isa::Opcode> v;
  for (const auto& i : insns(p, stream)) v.push_back(i.opcode);
  return v;
}

}  // namespace pe_test
