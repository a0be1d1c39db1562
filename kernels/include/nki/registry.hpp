// The kernels the command-line tools can run, by name, with their inputs and a plain C++
// reference for their output.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"

namespace kernels {

struct Args {
  std::string kernel;  // a name from list()
  int64_t n = 0, m = 0, k = 0;
  int64_t row_chunk = 128;  // tiled
  int64_t free_dim = 200;   // stream
  ncore::isa::Dtype dtype = ncore::isa::Dtype::fp32;
  unsigned dma_queues = 4;  // DMA queues the trace spreads dma_copy over
};

struct KernelInfo {
  std::string name;
  std::string doc;
};

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  ncore::isa::Dtype dtype = ncore::isa::Dtype::fp32;
  uint64_t bytes() const;
};
using InputSpec = TensorSpec;

// naive, tiled, stream, direct_alloc, direct_alloc_bad.
const std::vector<KernelInfo>& list();
// Traces the kernel for `preset`. Throws ncore::KernelError on bad arguments or a kernel that
// breaks a hardware rule.
ncore::Program build(const Args& args, const ncore::Preset& preset);
// The HBM inputs the Program expects, in order, and its output.
std::vector<InputSpec> inputs(const Args& args);
TensorSpec output(const Args& args);
// The expected output bytes (little-endian) for the given input bytes by name, computed in
// plain C++: a + b in fp32, rounded once to the dtype. For direct_alloc_bad this is the right
// answer, which that kernel does not produce. Throws ncore::InputError on missing or
// mis-sized inputs.
std::vector<uint8_t> reference(const Args& args, const std::map<std::string, std::vector<uint8_t>>& inputs);

}  // namespace kernels
