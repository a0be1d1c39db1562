// The golden instruction-level model; see golden_model.hpp.
#include "golden_model.hpp"

#include <fmt/format.h>

#include <cstring>
#include <string>
#include <utility>

#include "ncore/error.hpp"
#include "ncore/interrupt.hpp"
#include "ncore/validate.hpp"
#include "pe_matmul.hpp"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "gather/scatter copy fp32 rows as little-endian words");

namespace ncore {

GoldenModel::GoldenModel(const Preset& preset, uint64_t hbm_bytes)
    : GoldenModel(preset, ByteSpan{}) {
  own_hbm_ = ZeroedBytes(hbm_bytes);
  hbm_ = ByteSpan{own_hbm_.data(), own_hbm_.size()};
}

GoldenModel::GoldenModel(const Preset& preset, ByteSpan hbm)
    : preset_(preset),
      hbm_(hbm),
      sbuf_(preset.num_partitions * preset.sbuf_bytes, 0),
      psum_(preset.num_partitions * preset.psum_bytes, 0) {
  if (!num::host_float_is_ieee())
    throw SimError("the host's float arithmetic flushes subnormals or does not round to nearest even "
                   "(MXCSR FTZ/DAZ or rounding mode changed, e.g. by -ffast-math); the golden model needs IEEE floats");
}

namespace {
// Partition `partition` of an on-chip memory (`name`: SBUF or PSUM) of `bytes` bytes per partition.
const uint8_t* partition_of(const std::vector<uint8_t>& mem, const char* name, uint64_t bytes, unsigned partition,
                            const Preset& preset) {
  if (partition >= preset.num_partitions)
    throw SimError(fmt::format("{} partition {} is outside 0..{}", name, partition, preset.num_partitions - 1));
  return mem.data() + uint64_t{partition} * bytes;
}
}  // namespace

uint8_t* GoldenModel::sbuf(unsigned partition) {
  return const_cast<uint8_t*>(std::as_const(*this).sbuf(partition));
}

const uint8_t* GoldenModel::sbuf(unsigned partition) const {
  return partition_of(sbuf_, "SBUF", preset_.sbuf_bytes, partition, preset_);
}

uint8_t* GoldenModel::psum(unsigned partition) {
  return const_cast<uint8_t*>(std::as_const(*this).psum(partition));
}

const uint8_t* GoldenModel::psum(unsigned partition) const {
  return partition_of(psum_, "PSUM", preset_.psum_bytes, partition, preset_);
}

const uint8_t* GoldenModel::elem_ptr(isa::Buffer mem, uint32_t partition, int64_t addr, unsigned nbytes) const {
  switch (mem) {
    case isa::Buffer::hbm:
      if (addr < 0 || static_cast<uint64_t>(addr) + nbytes > hbm_.size)
        throw SimError(fmt::format("HBM access of {} bytes at {} is outside the {} bytes of HBM", nbytes, addr,
                                   hbm_.size));
      return hbm_.data + addr;
    case isa::Buffer::sbuf:
      if (addr < 0 || static_cast<uint64_t>(addr) + nbytes > preset_.sbuf_bytes)
        throw SimError(fmt::format("SBUF access of {} bytes at {} of partition {} is outside the {} bytes of a partition",
                                   nbytes, addr, partition, preset_.sbuf_bytes));
      return sbuf(partition) + addr;
    case isa::Buffer::psum:
      if (addr < 0 || static_cast<uint64_t>(addr) + nbytes > preset_.psum_bytes)
        throw SimError(fmt::format("PSUM access of {} bytes at {} of partition {} is outside the {} bytes of a partition",
                                   nbytes, addr, partition, preset_.psum_bytes));
      return psum(partition) + addr;
    default:
      throw SimError(fmt::format("the golden model does not model {} yet", isa::to_string(mem)));
  }
}

uint8_t* GoldenModel::elem_ptr(isa::Buffer mem, uint32_t partition, int64_t addr, unsigned nbytes) {
  return const_cast<uint8_t*>(static_cast<const GoldenModel*>(this)->elem_ptr(mem, partition, addr, nbytes));
}

uint32_t GoldenModel::read_bits(isa::Buffer mem, uint32_t partition, int64_t byte_addr, unsigned nbytes) const {
  return num::load_bytes(elem_ptr(mem, partition, byte_addr, nbytes), nbytes);
}

void GoldenModel::write_bits(isa::Buffer mem, uint32_t partition, int64_t byte_addr, unsigned nbytes, uint32_t bits) {
  num::store_bytes(elem_ptr(mem, partition, byte_addr, nbytes), nbytes, bits);
}

// The first byte of `mem` as seen by partition `p` (HBM: one space for all), and its size, when
// the whole of `ap` lies inside it; null otherwise (then each element is checked on its own, and
// the first one outside gives the error).
uint8_t* GoldenModel::span_base(const isa::Ap& ap, uint32_t p) const {
  const Box b = ap_box(ap);
  if (b.empty() || b.lo < 0) return nullptr;
  uint8_t* base = nullptr;
  uint64_t size = 0;
  switch (ap.mem) {
    case isa::Buffer::hbm:
      base = const_cast<uint8_t*>(hbm_.data);
      size = hbm_.size;
      break;
    case isa::Buffer::sbuf:
      if (ap.start_part + ap.num_part > preset_.num_partitions) return nullptr;
      base = const_cast<uint8_t*>(sbuf_.data()) + uint64_t{ap.start_part + p} * preset_.sbuf_bytes;
      size = preset_.sbuf_bytes;
      break;
    case isa::Buffer::psum:
      if (ap.start_part + ap.num_part > preset_.num_partitions) return nullptr;
      base = const_cast<uint8_t*>(psum_.data()) + uint64_t{ap.start_part + p} * preset_.psum_bytes;
      size = preset_.psum_bytes;
      break;
    default: return nullptr;
  }
  return static_cast<uint64_t>(b.hi) <= size ? base : nullptr;
}

// Calls f(base, first, n) for each innermost row of `ap` that lies wholly in memory: base points
// at the row's first element, `first` is that element's index in ap_for_each order and n the
// row's length (elements stride[0] apart). Returns false, calling nothing, when some element is
// outside its memory.
template <class F>
bool GoldenModel::for_rows(const isa::Ap& ap, F&& f) const {
  if (!span_base(ap, 0)) return false;
  const int64_t esz = isa::dtype_bytes(ap.dtype);
  const bool hbm = ap.mem == isa::Buffer::hbm;
  uint64_t first = 0;
  for (uint32_t p = 0; p < ap.num_part; ++p) {
    uint8_t* part = span_base(ap, p);
    const int64_t base = static_cast<int64_t>(ap.offset) + (hbm ? esz * int64_t{ap.part_stride} * p : 0);
    for (uint32_t i3 = 0; i3 < ap.size[3]; ++i3)
      for (uint32_t i2 = 0; i2 < ap.size[2]; ++i2)
        for (uint32_t i1 = 0; i1 < ap.size[1]; ++i1, first += ap.size[0]) {
          const int64_t e = int64_t{i3} * ap.stride[3] + int64_t{i2} * ap.stride[2] + int64_t{i1} * ap.stride[1];
          f(part + base + e * esz, first, ap.size[0]);
        }
  }
  return true;
}

std::vector<uint32_t> GoldenModel::gather(const isa::Ap& ap) const {
  std::vector<uint32_t> out(ap_elems(ap));
  const unsigned nb = isa::dtype_bytes(ap.dtype);
  const int64_t step = int64_t{ap.stride[0]} * nb;
  if (for_rows(ap, [&](const uint8_t* row, uint64_t first, uint32_t n) {
        uint32_t* o = out.data() + first;
        if (nb == 4 && step == 4) {
          std::memcpy(o, row, 4 * uint64_t{n});  // little-endian host, as load_elem
        } else {
          for (uint32_t i = 0; i < n; ++i) o[i] = num::load_elem(row + i * step, ap.dtype);
        }
      }))
    return out;
  size_t k = 0;
  ap_for_each(ap, [&](uint32_t p, uint64_t, int64_t addr) {
    out[k++] = num::load_elem(elem_ptr(ap.mem, ap.start_part + p, addr, nb), ap.dtype);
  });
  return out;
}

void GoldenModel::scatter(const isa::Ap& ap, const std::vector<uint32_t>& bits) {
  const unsigned nb = isa::dtype_bytes(ap.dtype);
  const int64_t step = int64_t{ap.stride[0]} * nb;
  if (for_rows(ap, [&](const uint8_t* crow, uint64_t first, uint32_t n) {
        uint8_t* row = const_cast<uint8_t*>(crow);
        const uint32_t* v = bits.data() + first;
        if (nb == 4 && step == 4) {
          std::memcpy(row, v, 4 * uint64_t{n});
        } else {
          for (uint32_t i = 0; i < n; ++i) num::store_elem(row + i * step, ap.dtype, v[i]);
        }
      }))
    return;
  size_t k = 0;
  ap_for_each(ap, [&](uint32_t p, uint64_t, int64_t addr) {
    num::store_elem(elem_ptr(ap.mem, ap.start_part + p, addr, nb), ap.dtype, bits[k++]);
  });
}

uint32_t GoldenModel::sref_lane(const isa::Sref& s, uint32_t lane, bool bits) const {
  const unsigned nb = isa::dtype_bytes(s.dtype);
  const uint8_t* e = elem_ptr(s.mem, s.start_part + lane, static_cast<int64_t>(s.offset), nb);
  return num::lane_in(num::load_elem(e, s.dtype), s.dtype, bits);
}

void GoldenModel::execute(const isa::Insn& insn) {
  validate_insn(insn, preset_, hbm_bytes());
  const isa::Dtype dt = insn.dst.dtype;
  switch (insn.opcode) {
    case isa::Opcode::sem_wait:
      return;

    case isa::Opcode::dma_copy:
    case isa::Opcode::tensor_copy: {
      std::vector<uint32_t> v = gather(insn.src0);
      const isa::Dtype st = insn.src0.dtype;
      if (st != dt)
        for (auto& x : v) x = num::from_f32_bits(num::to_f32_bits(x, st), dt);
      scatter(insn.dst, v);
      return;
    }

    case isa::Opcode::tensor_tensor: {
      std::vector<uint32_t> a = gather(insn.src0);
      const std::vector<uint32_t> b = gather(insn.src1);
      const bool bits = num::is_bitvec(insn.op0);
      for (size_t k = 0; k < a.size(); ++k)
        a[k] = num::lane_out(num::alu(insn.op0, num::lane_in(a[k], insn.src0.dtype, bits),
                                      num::lane_in(b[k], insn.src1.dtype, bits)),
                             dt, bits);
      scatter(insn.dst, a);
      return;
    }

    case isa::Opcode::tensor_scalar: {
      std::vector<uint32_t> v = gather(insn.src0);
      const uint64_t free = ap_free_elems(insn.src0);
      const bool bits = num::is_bitvec(insn.op0) || num::is_bitvec(insn.op1);
      for (uint32_t p = 0; p < insn.src0.num_part; ++p) {
        const uint32_t o0 = insn.s0_vec ? sref_lane(insn.s0, p, bits) : insn.imm0;
        const uint32_t o1 = insn.s1_vec ? sref_lane(insn.s1, p, bits) : insn.imm1;
        for (uint64_t i = 0; i < free; ++i) {
          uint32_t& e = v[p * free + i];
          uint32_t r = num::lane_in(e, insn.src0.dtype, bits);
          if (insn.op0 != isa::AluOp::bypass) r = insn.rev0 ? num::alu(insn.op0, o0, r) : num::alu(insn.op0, r, o0);
          if (insn.op1 != isa::AluOp::bypass) r = insn.rev1 ? num::alu(insn.op1, o1, r) : num::alu(insn.op1, r, o1);
          e = num::lane_out(r, dt, bits);
        }
      }
      scatter(insn.dst, v);
      return;
    }

    case isa::Opcode::memset: {
      const std::vector<uint32_t> v(ap_elems(insn.dst), num::from_f32_bits(insn.imm0, dt));
      scatter(insn.dst, v);
      return;
    }

    case isa::Opcode::tensor_reduce: return tensor_reduce(insn);
    case isa::Opcode::activation: return activation(insn);
    case isa::Opcode::load_stationary: return load_stationary(insn);
    case isa::Opcode::multiply_moving: return multiply_moving(insn);
  }
  throw SimError(fmt::format("the golden model has no semantics for opcode {}", static_cast<unsigned>(insn.opcode)));
}

void GoldenModel::load_stationary(const isa::Insn& insn) {
  const isa::Ap& a = insn.src0;
  Stationary st;
  st.loaded = true;
  st.k = a.num_part;
  st.m = static_cast<uint32_t>(ap_free_elems(a));
  st.dtype = a.dtype;
  st.w = gather(a);  // [k][j] in ap_for_each order
  for (auto& w : st.w) w = num::to_f32_bits(w, a.dtype);
  stationary_ = std::move(st);
}

// dst[j, n] = ((0 + w[0][j] x[0][n]) + w[1][j] x[1][n]) + ... , each step fused and rounded once,
// then written to PSUM or added to it (fp32, one rounding). The column sums run in pe_matmul.
void GoldenModel::multiply_moving(const isa::Insn& insn) {
  const Stationary& st = stationary_;
  const isa::Ap& mv = insn.src0;
  if (!st.loaded) throw SimError("multiply_moving: no stationary operand has been loaded");
  validate_pe_pair(st.k, st.m, st.dtype, insn);
  const uint64_t n = ap_free_elems(mv);
  std::vector<uint32_t> x = gather(mv);  // [k][n]
  for (auto& v : x) v = num::to_f32_bits(v, mv.dtype);
  std::vector<uint32_t> sums(uint64_t{st.m} * n);
  static_assert(sizeof(float) == sizeof(uint32_t), "fp32 bits");
  golden::pe_matmul(reinterpret_cast<const float*>(st.w.data()), reinterpret_cast<const float*>(x.data()),
                    reinterpret_cast<float*>(sums.data()), st.k, st.m, n);
  if (insn.acc) {
    std::vector<uint32_t> acc = gather(insn.dst);
    for (uint64_t i = 0; i < acc.size(); ++i) acc[i] = num::alu(isa::AluOp::add, acc[i], sums[i]);
    scatter(insn.dst, acc);
  } else {
    scatter(insn.dst, sums);
  }
}

// dst[p, o] = fold of the o-th group of R = size[0] * ... * size[red_axes - 1] consecutive
// elements of src0 (in ap_for_each order): acc = x[0], then acc = acc op0 x[i] for i = 1..R-1 in
// fp32 (one rounding per step), rounded once to dst.dtype.
void GoldenModel::tensor_reduce(const isa::Insn& insn) {
  const isa::Ap& s = insn.src0;
  uint64_t r = 1;
  for (unsigned k = 0; k < insn.red_axes; ++k) r *= s.size[k];
  const std::vector<uint32_t> x = gather(s);
  const uint64_t n = ap_free_elems(s), outer = n / r;
  const bool bits = num::is_bitvec(insn.op0);
  std::vector<uint32_t> out(uint64_t{s.num_part} * outer);
  for (uint64_t p = 0; p < s.num_part; ++p) {
    for (uint64_t o = 0; o < outer; ++o) {
      const uint32_t* g = &x[p * n + o * r];
      uint32_t acc = num::lane_in(g[0], s.dtype, bits);
      for (uint64_t i = 1; i < r; ++i) acc = num::alu(insn.op0, acc, num::lane_in(g[i], s.dtype, bits));
      out[p * outer + o] = num::lane_out(acc, insn.dst.dtype, bits);
    }
  }
  scatter(insn.dst, out);
}

// dst = func((x * scale) + bias): the product and the sum rounded to fp32 (RNE), func exact, one
// rounding to dst.dtype. With dst2, acc = +0, then acc = acc + func(...) over the elements in
// ap_for_each order (fp32, one rounding per step), rounded once to dst2.dtype. The per-partition
// operands and src0 are read before anything is written; dst2 is written after dst.
void GoldenModel::activation(const isa::Insn& insn) {
  const isa::Ap& s = insn.src0;
  std::vector<uint32_t> v = gather(s);
  const uint64_t n = ap_free_elems(s);
  std::vector<uint32_t> sums(s.num_part);
  for (uint32_t p = 0; p < s.num_part; ++p) {
    const uint32_t scale = insn.s0_vec ? sref_lane(insn.s0, p, false) : insn.imm0;
    const uint32_t bias = insn.s1_vec ? sref_lane(insn.s1, p, false) : insn.imm1;
    uint32_t acc = 0;  // +0
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t& e = v[p * n + i];
      const uint32_t y = num::alu(isa::AluOp::multiply, num::to_f32_bits(e, s.dtype), scale);
      const uint32_t f = num::act(insn.func, num::alu(isa::AluOp::add, y, bias));
      e = num::from_f32_bits(f, insn.dst.dtype);
      acc = num::alu(isa::AluOp::add, acc, f);
    }
    sums[p] = num::from_f32_bits(acc, insn.dst2.dtype);
  }
  scatter(insn.dst, v);
  if (insn.dst2.num_part != 0) scatter(insn.dst2, sums);
}

GoldenModel::RunStats GoldenModel::run(const Program& prog) {
  prog.load_constants(hbm_.data, hbm_.size);
  sem_.reset();
  RunStats stats;
  std::vector<size_t> head(prog.streams.size(), 0);
  for (;;) {
    bool progress = false, done = true;
    for (size_t s = 0; s < prog.streams.size(); ++s) {
      const Stream& st = prog.streams[s];
      if (head[s] >= st.insns.size()) continue;
      done = false;
      const isa::Insn& insn = st.insns[head[s]].insn;
      if (insn.wait_sem >= kNumSemaphores || insn.upd_sem >= kNumSemaphores)
        throw SimError(fmt::format("stream {} instruction {}: semaphore index is outside 0..{}", st.name, head[s],
                                   kNumSemaphores - 1));
      if (!sem_.wait_holds(insn)) continue;
      execute(insn);
      sem_.fire_all(insn, preset_);
      ++stats.instructions;
      stats.dma_transfers += insn.opcode == isa::Opcode::dma_copy;
      ++head[s];
      progress = true;
    }
    if (done) return stats;
    interrupt::check();  // Ctrl-C, between instructions
    if (!progress) {
      std::string msg = "deadlock: no stream can proceed";
      for (size_t s = 0; s < prog.streams.size(); ++s) {
        const Stream& st = prog.streams[s];
        if (head[s] >= st.insns.size()) continue;
        const isa::Insn& insn = st.insns[head[s]].insn;
        msg += fmt::format("\n  stream {} instruction {} waits with S[{}] = {}: {}", st.name, head[s], insn.wait_sem,
                           sem_[insn.wait_sem], format_insn(insn));
      }
      throw SimError(msg);
    }
  }
}

}  // namespace ncore
