// libFuzzer target: instruction decoding, formatting and validation.
//
// The input is a preset choice, an HBM size and instruction records (isa::kInsnBytes each,
// decoded as the image loader does). Every decoded instruction, however malformed, must format
// (format_insn, format_wait, format_update never fail: error messages call them) and either
// validate or be refused with a SimError; the records that validate are put in their streams
// of a Program, which validate_program checks as a whole. An instruction that validates must
// encode back to a record that decodes to the same fields.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "ncore/error.hpp"
#include "ncore/program.hpp"
#include "ncore/validate.hpp"

namespace {

bool same(const ncore::isa::Insn& a, const ncore::isa::Insn& b) {
  uint8_t ea[ncore::isa::kInsnBytes], eb[ncore::isa::kInsnBytes];
  ncore::isa::encode(a, ea);
  ncore::isa::encode(b, eb);
  return std::memcmp(ea, eb, sizeof ea) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ncore;
  if (size < 5) return 0;
  const Preset& pr = kPresets[data[0] % std::size(kPresets)];
  uint32_t hbm_log = 0;
  std::memcpy(&hbm_log, data + 1, 4);
  const uint64_t hbm_bytes = uint64_t{1} << (hbm_log % (pr.hbm_addr_bits + 1));
  data += 5;
  size -= 5;

  Program prog;
  prog.preset = pr.name;
  prog.hbm_bytes = hbm_bytes;
  prog.streams = make_streams(static_cast<unsigned>(pr.dma_queues));
  prog.locations.push_back({"fuzz", 1});
  for (; size >= isa::kInsnBytes; data += isa::kInsnBytes, size -= isa::kInsnBytes) {
    const isa::Insn insn = isa::decode(data);
    const std::string text = format_insn(insn) + format_wait(insn) + format_update(insn);
    if (text.empty()) std::abort();
    try {
      validate_insn(insn, pr, hbm_bytes);
    } catch (const SimError&) {
      continue;
    }
    uint8_t rec[isa::kInsnBytes];
    isa::encode(insn, rec);
    if (!same(isa::decode(rec), insn)) std::abort();
    unsigned stream = 0;
    try {
      stream = Program::stream_index(insn.engine, insn.dma_queue);  // no stream for engine none
    } catch (const SimError&) {
      continue;
    }
    prog.streams.at(stream).insns.push_back({insn, 0});
  }
  try {
    validate_program(prog, pr);
  } catch (const SimError&) {
  }
  return 0;
}
