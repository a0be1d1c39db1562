// The kernels the command-line tools can run, by name, with their inputs and a plain C++
// reference for their output.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"

namespace kernels {

struct Args {
  std::string kernel;  // a name from list()
  // Sizes; which ones a kernel uses, and what they mean, is in its KernelInfo::sizes.
  int64_t n = 0, m = 0, k = 0;
  int64_t row_chunk = 128;  // tiled
  int64_t free_dim = 200;   // stream
  ncore::isa::Dtype dtype = ncore::isa::Dtype::fp32;
  unsigned dma_queues = 4;  // DMA queues the trace spreads dma_copy over
  // conv (fused_conv2d_maxpool): X [batch, in_channels, height, width], W [out_channels,
  // in_channels, filter, filter], bias [out_channels]; the defaults are the harness's small case.
  int64_t batch = 4, in_channels = 128, out_channels = 128, height = 32, width = 16, filter = 3, pool_size = 1;
  bool bias = true;  // random bias; false: all zeros (the harness's cases without bias)
};

// One size argument of a kernel: the Args field and command-line option -n, -m or -k.
struct SizeArg {
  char flag = 'n';          // 'n', 'm' or 'k'
  std::string what;         // a short noun for messages: "vector length", "row count"
  std::string help;         // what it is, for --help
  bool required = true;     // else 0 (not given) means default_doc
  std::string default_doc;  // what an absent value means, e.g. "n" (transpose: m = n)
  int64_t multiple_of = 1;  // the kernel needs a positive multiple of this (its own check says so too)
};

struct KernelInfo {
  std::string name;
  std::string doc;
  std::vector<SizeArg> sizes;  // the size arguments it uses, in the order to print them
  bool row_chunk = false;      // uses Args::row_chunk (--row-chunk)
  bool free_dim = false;       // uses Args::free_dim (--free-dim)
  bool conv = false;           // uses the conv fields of Args (--batch, --in-channels, ...)
  // Whether the Program's output equals reference() bit for bit on finite inputs (false for
  // matmul: the tensor engine sums in fp32 in its own order, the reference in double).
  bool exact = true;
};

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  ncore::isa::Dtype dtype = ncore::isa::Dtype::fp32;
  bool zeros = false;  // an input whose random value is all zeros (conv's bias when Args::bias is false)
  uint64_t bytes() const;
};
using InputSpec = TensorSpec;

// naive, tiled, stream, direct_alloc, direct_alloc_bad, transpose, matmul, matmul_blocked, conv.
const std::vector<KernelInfo>& list();
// The KernelInfo of `name`; throws ncore::KernelError naming the known kernels.
const KernelInfo& info(const std::string& name);
// Checks the arguments the kernel uses (positive sizes, a valid dtype; divisibility is the
// kernel's own check at trace time) and throws ncore::KernelError with what is wrong.
void check_args(const Args& args);
// The arguments the kernel uses with their values, defaults resolved, in KernelInfo order:
// {"n", 1024}, {"m", 1024} for transpose; {"n", ...}, {"row_chunk", 128} for tiled. For the
// report line and the JSON output.
std::vector<std::pair<std::string, int64_t>> arg_values(const Args& args);
// The same as text: "n=1024 m=1024".
std::string args_text(const Args& args);
// Traces the kernel for `preset`. Throws ncore::KernelError on bad arguments or a kernel that
// breaks a hardware rule.
ncore::Program build(const Args& args, const ncore::Preset& preset);
// The HBM inputs the Program expects, in order, and its output.
std::vector<InputSpec> inputs(const Args& args);
TensorSpec output(const Args& args);
// The expected output bytes (little-endian) for the given input bytes by name, computed in
// plain C++: vector adds a + b in fp32, rounded once to the dtype (for direct_alloc_bad this
// is the right answer, which that kernel does not produce); transpose the exact transpose;
// matmul the products summed in double, rounded once to the dtype; conv the sums (and bias) in
// double, max-pooled, rounded once to the dtype. Throws ncore::InputError on
// missing or mis-sized inputs.
std::vector<uint8_t> reference(const Args& args, const std::map<std::string, std::vector<uint8_t>>& inputs);

}  // namespace kernels
