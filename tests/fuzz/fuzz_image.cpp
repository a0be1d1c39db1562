// libFuzzer target: the Program image loader (Program::read_image).
//
// Any input either loads or is refused with an ImageError; nothing else may escape, and no
// memory error, undefined behaviour or leak may happen on the way (ASan, UBSan). A Program
// that loads must survive its own round trip: written again and read back it gives the same
// image bytes, and its listing (which formats every instruction) can be printed.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <sstream>
#include <string>

#include "ncore/error.hpp"
#include "ncore/program.hpp"

namespace {

std::string image_of(const ncore::Program& p) {
  std::ostringstream out;
  p.write_image(out);
  return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  ncore::Program p;
  try {
    p = ncore::Program::read_image(in);
  } catch (const ncore::ImageError&) {
    return 0;  // refused, with a message: the expected outcome for nearly every input
  }
  const std::string once = image_of(p);
  std::istringstream again(once);
  ncore::Program q;
  try {
    q = ncore::Program::read_image(again);
  } catch (const ncore::ImageError& e) {
    std::fprintf(stderr, "a loaded Program's own image is refused: %s\n", e.what());
    std::abort();
  }
  if (image_of(q) != once) {
    std::fprintf(stderr, "a loaded Program's image changes when written and read again\n");
    std::abort();
  }
  if (p.listing().empty() && p.instruction_count() > 0) std::abort();
  return 0;
}
