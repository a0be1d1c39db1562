// Program: stream layout, look-ups, files and the readable listing.
//
// Listing layout: a header of comment lines (';') naming the kernel, the preset, the HBM
// footprint and every HBM tensor, then one line per instruction, stream by stream:
//
//   dve[12]  tensor_tensor dst=... op0=add  wait S[6]>=32  upd S[3]+=1@complete  ; kernels/src/vector_add.cpp:88
//
// The index in brackets is the instruction's position in its stream (sem_wait included).
#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "ncore/error.hpp"
#include "ncore/program.hpp"
#include "ncore/scheduler.hpp"

namespace ncore {

unsigned Program::stream_index(isa::Engine engine, unsigned queue) {
  if (engine == isa::Engine::dma) return kNumEngineStreams + queue;
  if (const int s = isa::engine_stream(engine); s >= 0) return static_cast<unsigned>(s);
  throw SimError(fmt::format("no instruction stream for engine '{}'", isa::to_string(engine)));
}

std::vector<Stream> make_streams(unsigned dma_queues) {
  std::vector<Stream> s(kNumEngineStreams + dma_queues);
  for (unsigned i = 0; i < kNumEngineStreams; ++i) {
    s[i].name = isa::to_string(isa::kStreamEngine[i]);
    s[i].engine = isa::kStreamEngine[i];
  }
  for (unsigned q = 0; q < dma_queues; ++q) {
    s[kNumEngineStreams + q].name = fmt::format("q{}", q);
    s[kNumEngineStreams + q].engine = isa::Engine::dma;
    s[kNumEngineStreams + q].queue = q;
  }
  return s;
}

uint64_t Program::instruction_count() const {
  uint64_t n = 0;
  for (const auto& s : streams) n += s.insns.size();
  return n;
}

const HbmTensor* Program::find_tensor(const std::string& name) const {
  for (const auto& t : hbm_tensors)
    if (t.name == name) return &t;
  return nullptr;
}

bool Program::writes_hbm(uint64_t offset, uint64_t bytes) const {
  const Box range{0, 1, static_cast<int64_t>(offset), static_cast<int64_t>(offset + bytes)};
  for (const auto& st : streams)
    for (const auto& in : st.insns) {
      if (in.insn.opcode == isa::Opcode::sem_wait || in.insn.dst.mem != isa::Buffer::hbm || in.insn.dst.num_part == 0)
        continue;
      Box b = region_of(in.insn.dst).box;
      b.p_lo = 0;
      b.p_hi = 1;
      if (b.overlaps(range)) return true;
    }
  return false;
}

std::vector<std::string> Program::inputs_written() const {
  std::vector<std::string> v;
  for (const auto& t : hbm_tensors)
    if (t.role == TensorRole::input && writes_hbm(t.offset, t.bytes)) v.push_back(t.name);
  return v;
}

void Program::load_constants(uint8_t* hbm) const {
  for (const auto& t : hbm_tensors)
    if (t.role == TensorRole::constant && !t.init.empty()) std::memcpy(hbm + t.offset, t.init.data(), t.init.size());
}

void Program::load_constants(uint8_t* hbm, uint64_t hbm_size) const {
  for (const auto& t : hbm_tensors) {
    if (t.role != TensorRole::constant) continue;
    if (t.init.size() != t.bytes)
      throw SimError(fmt::format("constant tensor '{}' has {} init bytes, but its shape and dtype need {}", t.name,
                                 t.init.size(), t.bytes));
    if (t.offset > hbm_size || t.bytes > hbm_size - t.offset)
      throw SimError(fmt::format("constant tensor '{}' at [{}, {}) lies outside the {} bytes of HBM", t.name, t.offset,
                                 t.offset + t.bytes, hbm_size));
  }
  load_constants(hbm);
}

void Program::save(const std::string& path) const {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw ImageError(fmt::format("cannot write Program image '{}'", path));
  write_image(f);
  f.flush();
  if (!f) throw ImageError(fmt::format("error while writing Program image '{}'", path));
}

Program Program::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ImageError(fmt::format("cannot open Program image '{}'", path));
  try {
    return read_image(f);
  } catch (const ImageError& e) {
    throw ImageError(fmt::format("{}: {}", path, e.what()));
  }
}

namespace {

const char* role_name(TensorRole r) {
  switch (r) {
    case TensorRole::input: return "input";
    case TensorRole::output: return "output";
    case TensorRole::internal: return "internal";
    case TensorRole::constant: return "constant";
  }
  return "?";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace

std::string Program::listing() const {
  std::string out;
  out += fmt::format("; kernel {}  preset {}  hbm_bytes {}  instructions {}\n", kernel, preset, hbm_bytes,
                     instruction_count());
  out += "; hbm tensors:\n";
  size_t w = 4;
  for (const auto& t : hbm_tensors) w = std::max(w, t.name.size());
  for (const auto& t : hbm_tensors)
    out += fmt::format(";   {:<{}}  {:<8} {} {:<14} offset 0x{:x}  bytes {}\n", t.name, w, role_name(t.role),
                       isa::to_string(t.dtype), shape_text(t.shape), t.offset, t.bytes);
  out += "; streams:";
  for (const auto& s : streams) out += fmt::format(" {}={}", s.name, s.insns.size());
  out += "\n";
  for (const auto& s : streams) {
    if (s.insns.empty()) continue;
    out += fmt::format("\n; stream {} ({} instructions)\n", s.name, s.insns.size());
    for (size_t k = 0; k < s.insns.size(); ++k) {
      const Instruction& in = s.insns[k];
      std::string where;
      if (in.loc < locations.size())
        where = fmt::format("{}:{}", locations[in.loc].file, locations[in.loc].line);
      else
        where = fmt::format("<location {} out of range>", in.loc);
      out += fmt::format("{}[{}]  {}  ; {}\n", s.name, k, format_insn(in.insn), where);
    }
  }
  return out;
}

}  // namespace ncore
