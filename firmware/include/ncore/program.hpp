// A Program: what a traced kernel becomes and what the simulator and the golden model run.
//
// It holds one in-order instruction stream per engine and per DMA queue, the HBM tensors the
// kernel reads and writes (where they live and what they are), and a table of kernel source
// locations for the listing and the profile. Streams synchronise only through the 256
// semaphores named in each instruction's wait and update fields.
//
// Stream and semaphore conventions (set by the scheduler, not by the hardware): stream i
// owns semaphore i and every instruction on it raises S[i] at completion: by 1 on engine
// streams, by 1 per DMA engine (dma_engines in all) on DMA queue streams.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "ncore/isa_gen.hpp"

namespace ncore {

inline constexpr unsigned kNumSemaphores = 256;

// Streams in a Program, in this order: the engines' own (generated from the ISA description),
// then the DMA queues.
using isa::kNumEngineStreams;
using isa::StreamKind;

struct SourceLoc {
  std::string file;  // as given by the kernel source (relative path)
  uint32_t line = 0;
};

struct Instruction {
  isa::Insn insn;
  uint32_t loc = 0;  // index into Program::locations
};

struct Stream {
  std::string name;       // "pe", "act", "pool", "dve", "sp", "q0".."q15"
  isa::Engine engine{};   // engine the stream feeds (dma for queues)
  uint32_t queue = 0;     // DMA queue id (queue streams)
  std::vector<Instruction> insns;
};

// input: filled by the caller; output: the kernel's result; internal: HBM scratch;
// constant: data the kernel needs that no caller provides (the identity matrix a tensor-engine
// transpose multiplies by), stored in the Program itself and copied into HBM by load_constants.
enum class TensorRole : uint8_t { input = 0, output = 1, internal = 2, constant = 3 };

// A tensor in HBM: the kernel's arguments, its result, any HBM scratch and constants.
struct HbmTensor {
  std::string name;
  isa::Dtype dtype{};
  std::vector<int64_t> shape;
  uint64_t offset = 0;  // byte address in HBM
  uint64_t bytes = 0;
  TensorRole role{};
  std::vector<uint8_t> init;  // constant: its `bytes` bytes (little-endian elements); empty otherwise
};

struct Program {
  std::string kernel;           // kernel name
  std::string preset;           // hardware preset it was traced for ("trn2", ...)
  std::vector<Stream> streams;  // kNumEngineStreams engine streams, then one per DMA queue
  std::vector<HbmTensor> hbm_tensors;
  uint64_t hbm_bytes = 0;       // HBM footprint: every tensor lies below this address
  std::vector<SourceLoc> locations;

  // Index of the stream an instruction of `engine` (and `queue` for DMA) belongs to.
  static unsigned stream_index(isa::Engine engine, unsigned queue);

  uint64_t instruction_count() const;
  const HbmTensor* find_tensor(const std::string& name) const;
  // Whether some instruction writes HBM bytes in [offset, offset + bytes) (a DMA into HBM).
  bool writes_hbm(uint64_t offset, uint64_t bytes) const;
  // The input tensors some instruction writes into (a kernel's argument used as its output).
  std::vector<std::string> inputs_written() const;

  // Copies every constant tensor's init bytes to its place in an HBM image of at least
  // hbm_bytes bytes. Whoever runs the Program (simulator, golden model, CLI) calls it after
  // zeroing HBM and before the first instruction. The second form throws SimError when a
  // constant lies beyond `hbm_size` bytes.
  void load_constants(uint8_t* hbm) const;
  void load_constants(uint8_t* hbm, uint64_t hbm_size) const;

  // Binary image ("NCIMG" magic, versioned, little-endian; instructions as isa::encode bits).
  void write_image(std::ostream& out) const;
  static Program read_image(std::istream& in);  // throws ImageError with what is wrong
  void save(const std::string& path) const;
  static Program load(const std::string& path);

  // Readable listing: one line per instruction with stream, index, opcode, operands,
  // semaphore wait and update, and the source location.
  std::string listing() const;
};

// The empty streams of a Program for a preset with `dma_queues` DMA queues: the engine
// streams pe, act, pool, dve, sp, then q0..q<dma_queues-1>, each with its engine and queue.
std::vector<Stream> make_streams(unsigned dma_queues);

// Image format identification (see image.cpp for the layout).
inline constexpr char kImageMagic[8] = {'N', 'C', 'I', 'M', 'G', '\0', '\0', '\0'};
// Version 2 added constant tensors (TensorRole::constant and their init bytes); version 3 a
// CRC-32 of the whole image at its end, so that a damaged file (one flipped bit) is refused before
// anything in it is trusted. Versions 1 and 2 are still read.
inline constexpr uint32_t kImageVersion = 3;
// The CRC-32 a version 3 image ends with, of `n` bytes (zlib's crc32).
uint32_t image_checksum(const uint8_t* p, size_t n);

// One instruction as text, e.g.
// "tensor_tensor dst=sbuf[0:128]+0x0 fp32 <200> src0=... op0=add  wait S[5]>=16  upd S[3]+=1@complete"
// (format.cpp describes the operand notation).
std::string format_insn(const isa::Insn& insn);
std::string format_ap(const isa::Ap& ap);
// An instruction's semaphore wait and update as the listing shows them, "S[5]>=16" and
// "S[3]+=1@complete" ("" when it has none).
std::string format_wait(const isa::Insn& insn);
std::string format_update(const isa::Insn& insn);

}  // namespace ncore
