// libFuzzer target: the .npy reader and writer (sim/cli/npy.cpp).
//
// Any input either parses or is refused with an InputError. A parsed array must round-trip:
// serialized and parsed again it has the same element type, shape and data, and serializing
// that gives the same bytes. It must also convert to each dtype's input (or be refused with an
// InputError) and back to a .npy array of its shape.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <vector>

#include "cli/npy.hpp"
#include "ncore/error.hpp"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ncore;
  const std::vector<uint8_t> bytes(data, data + size);
  sim::NpyArray a;
  try {
    a = sim::npy_parse(bytes, "fuzz.npy");
  } catch (const InputError&) {
    return 0;
  }
  const std::vector<uint8_t> once = sim::npy_serialize(a);
  sim::NpyArray b;
  try {
    b = sim::npy_parse(once, "round trip");
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    fail("a parsed array's own serialization is refused");
  }
  if (b.descr != a.descr || b.shape != a.shape || b.data != a.data) fail("the round trip changes the array");
  if (sim::npy_serialize(b) != once) fail("serializing the round trip gives other bytes");
  for (isa::Dtype dt : {isa::Dtype::fp32, isa::Dtype::fp16, isa::Dtype::bf16}) {
    try {
      const run::Array arr = sim::npy_to_array(a, dt, "fuzz.npy");
      if (arr.bytes.size() != a.elements() * isa::dtype_bytes(dt)) fail("the converted array has the wrong size");
      const sim::NpyArray back = sim::array_to_npy(arr);
      if (back.shape != a.shape || back.elements() != a.elements()) fail("the array converted back has another shape");
    } catch (const InputError&) {
    }
  }
  return 0;
}
