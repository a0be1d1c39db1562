// How a kernel declares itself, once, next to its code: its parameters (name, command-line
// flag, default, help, checks), its HBM inputs and outputs (names and shapes), how to trace it
// and its plain C++ reference. Everything else reads this table: the command line's options
// and help, the report line and the JSON fields, the run pipeline (inputs, outputs, the
// reference check) and the Makefile's `make sim` defaults (`ncore-sim --kernel K --print example`).
//
// A kernel file ends with its declaration:
//
//   static const kernels::Register reg{{
//       .name = "stream", .function = "vector_add_stream", .doc = "...",
//       .params = {kernels::vector_length(), {.name = "free_dim", .flag = "--free-dim", ...}},
//       .inputs = {{.name = "a_vec", .shape = [](const Values& v) { return Dims{v["n"]}; }}, ...},
//       .outputs = {{.name = "out", ...}},
//       .body = [](const Inputs& in, const Values& v) { return Outputs{vector_add_stream(in[0], in[1], v["free_dim"])}; },
//       .reference = ref::vector_add,
//       .example = "-n 25600 --free-dim 200 --check"}};
//
// and adding a kernel is that file and its line in kernels/CMakeLists.txt.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ncore/isa_gen.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "nki/tensor.hpp"
#include "nki/tracer.hpp"

namespace kernels {

using Dims = std::vector<int64_t>;
using Bytes = std::vector<uint8_t>;
// Arrays by tensor name: little-endian elements of the kernel's dtype.
using ByteMap = std::map<std::string, Bytes>;

// One parameter of a kernel: an integer (a size, a tile width) or a switch.
struct Param {
  std::string name;         // key: "n", "row_chunk"; the JSON field and the report's "name=value"
  std::string flag;         // command-line option: "-n", "--row-chunk"; a switch's "--no-bias"
  std::string help;         // for --help (kernels sharing a flag each add their own line)
  int64_t def = 0;          // the default; a switch: 1 (on) or 0 (off), the flag turns it over
  bool required = false;    // an integer with no default: the user gives it (or a file's shape does)
  bool is_switch = false;
  std::string what;         // a noun for messages: "vector length"
  std::string default_from; // 0 (not given) means this other parameter's value (transpose: m = n)
  // Taken from an input's shape when the input comes from a file: (input, dimension), the
  // dimension -1 meaning the element count. Two sources that disagree are an error.
  std::vector<std::pair<std::string, int>> from_inputs;
};

// The values of a kernel's parameters, defaults resolved, and its dtype.
class Values {
 public:
  Values() = default;
  Values(std::vector<std::pair<std::string, int64_t>> v, ncore::isa::Dtype dtype) : v_(std::move(v)), dtype_(dtype) {}
  // The value of parameter `name`; throws std::out_of_range for a name the kernel does not declare.
  int64_t operator[](const std::string& name) const;
  ncore::isa::Dtype dtype() const { return dtype_; }
  const std::vector<std::pair<std::string, int64_t>>& items() const { return v_; }
  std::string text() const;  // "n=25600 free_dim=200"

 private:
  std::vector<std::pair<std::string, int64_t>> v_;
  ncore::isa::Dtype dtype_ = ncore::isa::Dtype::fp32;
};

// How far a kernel's result that is not exact (the tensor engine sums in fp32 in its own order)
// may lie from its reference: per output, for each element, the sum of the magnitudes of the
// terms its accumulation adds (the products and the bias; for a pooled element the largest over
// its window), and how many roundings that accumulation has at most. run::compare turns it into
// the forward error bound gamma(roundings) * magnitude, gamma(n) = n u / (1 - n u) with u = 2^-24
// (fp32 sums), plus one rounding of each side to the dtype.
struct ErrorBound {
  std::map<std::string, std::vector<double>> magnitude;  // by output name, one per element
  int64_t roundings = 0;
};

// An HBM tensor of the kernel (an input or an output), in the kernel's dtype.
struct TensorDecl {
  std::string name;                               // the Program's HBM tensor name: "a_vec"
  std::function<Dims(const Values&)> shape;
  std::string help;                               // what it is, for --help
  std::vector<std::string> dims;                  // the dimensions' names, when a file fixes parameters
  std::string file_flag;                          // a short option for its .npy file ("--a"); all take --input NAME=FILE
  std::function<bool(const Values&)> zeros;       // random inputs: this one all zeros (conv's bias with --no-bias)
};

using Inputs = std::vector<nki::Tensor>;   // the HBM inputs, in declaration order
using Outputs = std::vector<nki::Tensor>;  // the results, in declaration order (whole HBM tensors)

struct Kernel {
  std::string name;      // --kernel NAME
  std::string function;  // the kernel function's name (Program::kernel)
  std::string doc;       // one paragraph for --help
  std::vector<Param> params;
  std::vector<TensorDecl> inputs, outputs;
  std::function<Outputs(const Inputs&, const Values&)> body;
  // The expected outputs, by name, for the inputs by name, computed independently of the model
  // (kernels/reference/reference.hpp says how and why).
  std::function<ByteMap(const Values&, const ByteMap&)> reference;
  // Whether the model's output equals the reference bit for bit (false: the tensor engine sums
  // in fp32 in its own order, the reference in double; compare within error_bound).
  bool exact = true;
  // Kernels that are not exact: the bound of their forward error for the inputs by name.
  std::function<ErrorBound(const Values&, const ByteMap&)> error_bound;
  std::string example;      // the arguments `make sim KERNEL=name` runs it with
  std::string waves;        // the GTKWave save file of its family in waves/ (without .gtkw)
  // Checks across parameters beyond each one's own (throws ncore::KernelError); optional.
  std::function<void(const Values&)> check;
};

// A kernel's static registration: `static const kernels::Register reg{{...}};` in its file.
struct Register {
  explicit Register(Kernel k);
};

// Every kernel of the binary, in registration order, and one by name (throws ncore::KernelError
// naming the known kernels).
const std::vector<const Kernel*>& all();
const Kernel& find(const std::string& name);

// What the caller asks for: a kernel by name, the parameters given (by name; the others take
// their defaults), the dtype and the DMA queues the trace spreads transfers over.
struct Args {
  std::string kernel;
  std::map<std::string, int64_t> given;
  ncore::isa::Dtype dtype = ncore::isa::Dtype::fp32;
  unsigned dma_queues = 4;

  Args() = default;
  Args(std::string k, std::map<std::string, int64_t> g, ncore::isa::Dtype dt = ncore::isa::Dtype::fp32)
      : kernel(std::move(k)), given(std::move(g)), dtype(dt) {}
  Args& set(const std::string& name, int64_t v) {
    given[name] = v;
    return *this;
  }
};

// The parameters' values: given, default, or taken from another; checked (positive integers,
// the kernel's own check). Throws ncore::KernelError saying what is wrong and which flag.
Values resolve(const Args& args);

// A tensor with its shape and dtype (a declaration evaluated for some values).
struct TensorSpec {
  std::string name;
  Dims shape;
  ncore::isa::Dtype dtype = ncore::isa::Dtype::fp32;
  bool zeros = false;  // random inputs: all zeros
  uint64_t elements() const;
  uint64_t bytes() const;
};
std::vector<TensorSpec> input_specs(const Kernel& k, const Values& v);
std::vector<TensorSpec> output_specs(const Kernel& k, const Values& v);
std::vector<TensorSpec> input_specs(const Args& args);   // of find(args.kernel), resolve(args)
std::vector<TensorSpec> output_specs(const Args& args);

// Traces the kernel for `preset` (declares its inputs in HBM, runs its body, marks its
// outputs). Throws ncore::KernelError for a kernel that breaks a hardware rule.
ncore::Program build(const Kernel& k, const Values& v, const ncore::Preset& preset, const nki::TraceOptions& opts = {});
ncore::Program build(const Args& args, const ncore::Preset& preset);

// The reference outputs for `inputs` (every input, by name), checked against the specs (throws
// ncore::InputError for a missing or mis-sized input).
ByteMap reference(const Kernel& k, const Values& v, const ByteMap& inputs);
ByteMap reference(const Args& args, const ByteMap& inputs);
// The error bound of a kernel that is not exact (its error_bound, inputs checked the same way);
// throws ncore::KernelError for an exact kernel.
ErrorBound error_bound(const Kernel& k, const Values& v, const ByteMap& inputs);

// The common parameter of the vector adds: -n, the vector length (or an input file's length).
Param vector_length();
// The parameters of a kernel of one matrix input: -n, its rows (a multiple of 128), and -m, its
// columns (default: n), each also taken from the input's file; `what` begins -m's help.
std::vector<Param> matrix_dims(const std::string& input, const std::string& what);
// That one matrix input `name`, of shape (n, m): its dimensions are the rows and the columns.
TensorDecl matrix_input(const std::string& name, const std::string& help);

}  // namespace kernels
