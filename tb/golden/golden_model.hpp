// The golden instruction-level model: what every instruction does to the memories, in C++, bit for
// bit what the RTL does (the numerics are tb/golden/numerics.hpp, held to rtl/ncore_fp_pkg.sv by
// tb/unit/fp). It has no timing. The simulator's check mode runs it beside the RTL and compares
// each instruction's destination with first_mismatch(); run() executes a whole Program on the
// model alone, honouring the semaphores, for kernel tests that do not need the RTL.
//
// Memories: HBM (flat bytes), SBUF (num_partitions x sbuf_bytes) and PSUM (num_partitions x
// psum_bytes). The tensor engine's state is the stationary operand the last load_stationary
// left in the array.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ncore/ap.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/memory.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "ncore/semaphores.hpp"
#include "ncore/numerics.hpp"

namespace ncore {

class GoldenModel {
 public:
  GoldenModel(const Preset& preset, uint64_t hbm_bytes);  // memories start zeroed
  // The model on HBM the caller owns (a run's HBM, used in place: no copy); SBUF and PSUM zeroed.
  GoldenModel(const Preset& preset, ByteSpan hbm);

  const Preset& preset() const { return preset_; }
  uint8_t* hbm() { return hbm_.data; }
  const uint8_t* hbm() const { return hbm_.data; }
  uint64_t hbm_bytes() const { return hbm_.size; }
  // preset.sbuf_bytes bytes of SBUF partition `partition`; throws SimError past the last one.
  uint8_t* sbuf(unsigned partition);
  const uint8_t* sbuf(unsigned partition) const;
  uint8_t* psum(unsigned partition);
  const uint8_t* psum(unsigned partition) const;

  // Element bits at byte `byte_addr` of partition `partition` of `mem` (for HBM the address is
  // absolute and `partition` is ignored), nbytes = 2 or 4, little-endian. Throws SimError when
  // the element is outside the memory. Shaped for first_mismatch's readers.
  uint32_t read_bits(isa::Buffer mem, uint32_t partition, int64_t byte_addr, unsigned nbytes) const;
  void write_bits(isa::Buffer mem, uint32_t partition, int64_t byte_addr, unsigned nbytes, uint32_t bits);

  // The data effect of one instruction (semaphores are the sequencer's business: sem_wait does
  // nothing here). Calls validate_insn() first, which throws SimError for out-of-range operands.
  // Every source element is read before any destination element is written.
  void execute(const isa::Insn& insn);

  // Runs a whole Program on the model alone with 256 uint32 semaphores starting at zero. Streams
  // take turns, one instruction per turn: a stream whose head instruction's wait condition holds
  // executes it and fires its update as often as ncore/semaphores.hpp says (a dma_copy once per
  // DMA engine, anything else once). Throws SimError listing the blocked streams' head instructions when no
  // stream can proceed (deadlock).
  struct RunStats {
    uint64_t instructions = 0;
    uint64_t dma_transfers = 0;
  };
  RunStats run(const Program& prog);

  // Semaphore values at the end of the last run() (each run() starts them at zero).
  const SemaphoreFile::Values& semaphores() const { return sem_.values(); }

 private:
  uint8_t* elem_ptr(isa::Buffer mem, uint32_t partition, int64_t byte_addr, unsigned nbytes);
  const uint8_t* elem_ptr(isa::Buffer mem, uint32_t partition, int64_t byte_addr, unsigned nbytes) const;
  uint8_t* span_base(const isa::Ap& ap, uint32_t p) const;
  template <class F>
  bool for_rows(const isa::Ap& ap, F&& f) const;
  std::vector<uint32_t> gather(const isa::Ap& ap) const;        // element bits in ap_for_each order
  void scatter(const isa::Ap& ap, const std::vector<uint32_t>& bits);
  // a per-partition operand as an ALU lane holds it: fp32, or its bits for a bitvec op (bits)
  uint32_t sref_lane(const isa::Sref& s, uint32_t lane, bool bits) const;

  void load_stationary(const isa::Insn& insn);
  void multiply_moving(const isa::Insn& insn);
  void tensor_reduce(const isa::Insn& insn);
  void activation(const isa::Insn& insn);

  Preset preset_;
  ZeroedBytes own_hbm_;  // HBM when the model owns it
  ByteSpan hbm_;         // the HBM it runs on (own_hbm_'s or the caller's)
  std::vector<uint8_t> sbuf_;
  std::vector<uint8_t> psum_;
  // The stationary operand in the array: K rows (partitions) x M columns, fp32 bits.
  struct Stationary {
    bool loaded = false;
    uint32_t k = 0, m = 0;
    isa::Dtype dtype{};
    std::vector<uint32_t> w;  // [k * m + j]
  } stationary_;
  SemaphoreFile sem_;
};

// The first element where two memories differ inside an operand (used by check mode).
//   partition: start_part + p (for HBM: the row p; its address is absolute)
//   index:     element number in ap_for_each order, p * ap_free_elems(ap) + i
//   byte_addr: the element's byte address (within the partition; absolute for HBM)
struct Mismatch {
  uint32_t partition;
  uint64_t index;
  int64_t byte_addr;
  uint32_t expected_bits;
  uint32_t actual_bits;
};

// read_expected(partition, byte_addr, nbytes) and read_actual(...) return element bits.
template <class ReadExpected, class ReadActual>
std::optional<Mismatch> first_mismatch(const isa::Ap& ap, ReadExpected&& read_expected, ReadActual&& read_actual) {
  std::optional<Mismatch> out;
  const unsigned nbytes = isa::dtype_bytes(ap.dtype);
  const uint64_t free = ap_free_elems(ap);
  ap_for_each(ap, [&](uint32_t p, uint64_t i, int64_t addr) {
    if (out) return;
    const uint32_t part = ap.start_part + p;
    const uint32_t e = read_expected(part, addr, nbytes);
    const uint32_t a = read_actual(part, addr, nbytes);
    if (e != a) out = Mismatch{part, uint64_t{p} * free + i, addr, e, a};
  });
  return out;
}

}  // namespace ncore
