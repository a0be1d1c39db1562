// Check mode; see golden_check.hpp.
#include "core/golden_check.hpp"

#include <cstring>

#include <fmt/format.h>

#include "ncore/error.hpp"

namespace ncore::sim {

GoldenCheck::GoldenCheck(const Preset& preset, const Program& prog, ByteSpan hbm,
                         const RtlModel& rtl, const PeSequencer& pe, const RunOptions& opt)
    : golden_(preset, prog.hbm_bytes), prog_(prog), hbm_(hbm), rtl_(rtl), pe_(pe) {
  copy_into_zeroed(golden_.hbm(), hbm.data, hbm.size);
  if (opt.golden_setup) opt.golden_setup(golden_);
}

bool GoldenCheck::completed(const InsnStream& st, uint32_t i, uint64_t now) {
  const isa::Insn& in = st.insn(i);
  golden_.execute(in);
  if (in.opcode == isa::Opcode::sem_wait || in.opcode == isa::Opcode::load_stationary) return false;
  if (in.opcode == isa::Opcode::multiply_moving && pe_.overwritten(i)) return false;
  compare(st, i, now, in.dst, "");
  if (in.opcode == isa::Opcode::activation && in.dst2.num_part != 0) compare(st, i, now, in.dst2, " (reduce_res)");
  return true;
}

void GoldenCheck::compare(const InsnStream& st, uint32_t i, uint64_t now, const isa::Ap& d, const char* which) const {
  const isa::Insn& in = st.insn(i);
  auto expected = [&](uint32_t part, int64_t addr, unsigned n) { return golden_.read_bits(d.mem, part, addr, n); };
  auto actual = [&](uint32_t part, int64_t addr, unsigned n) -> uint32_t {
    uint32_t v = 0;
    if (d.mem == isa::Buffer::hbm) {
      std::memcpy(&v, hbm_.data + addr, n);
    } else {
      const uint64_t w = static_cast<uint64_t>(addr) / 4;
      const uint32_t word = d.mem == isa::Buffer::psum ? rtl_.psum_word(part, w) : rtl_.sbuf_word(part, w);
      v = num::elem_of_word(word, addr, n);
    }
    return v;
  };
  if (auto mm = first_mismatch(d, expected, actual)) {
    const auto& loc = prog_.locations.at(prog_.streams[st.index()].insns[i].loc);
    throw SimError(fmt::format(
        "check: RTL and golden model differ after {}[{}] completed at cycle {}\n  {}\n  at {}:{}\n"
        "  first difference{}: element {} (partition {}, byte {:#x}): golden {:#0{}x}, RTL {:#0{}x}",
        st.name(), i, now, format_insn(in), loc.file, loc.line, which, mm->index, mm->partition, mm->byte_addr,
        mm->expected_bits, 2 + 2 * isa::dtype_bytes(d.dtype), mm->actual_bits, 2 + 2 * isa::dtype_bytes(d.dtype)));
  }
}

}  // namespace ncore::sim
