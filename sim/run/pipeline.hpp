// The run pipeline: the one sequence that turns a kernel and its inputs into outputs, cycles,
// counters and a correctness verdict. The command-line simulator, the kernel tests, the conv
// harness (through the command line) and the Python front end all call it; nothing else
// repeats it.
//
//   prepare   the kernel's parameter values (given, defaults, or read off input files), its
//             Program (traced, or an image checked to be that kernel's), its inputs (given,
//             checked against the Program, or random)
//   execute   HBM filled (zeros, the Program's constants, the inputs), the Program run on the
//             RTL (cycle by cycle, optionally checked against the golden model) or on the golden
//             model alone, the outputs cut out of HBM
//   verdict   each output compared with the kernel's reference (kernels/reference)
//
// run_program() is the middle step alone, for a Program that has no declaration (one traced
// from Python, a hand-written one).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/core_sim.hpp"
#include "kernels/kernel.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"

namespace ncore::run {

using Bytes = std::vector<uint8_t>;

// An array on the host: little-endian elements of a dtype, with a shape.
struct Array {
  std::vector<int64_t> shape;
  isa::Dtype dtype = isa::Dtype::fp32;
  Bytes bytes;
  std::string origin;  // where it came from ("a.npy"), for messages; "" for random
  // Or the elements in memory the caller owns and keeps alive through the run (a NumPy array's
  // buffer, passed without a copy): then `bytes` is empty.
  const uint8_t* view = nullptr;
  uint64_t view_bytes = 0;
  uint64_t elements() const;
  const uint8_t* data() const { return view ? view : bytes.data(); }
  uint64_t size_bytes() const { return view ? view_bytes : bytes.size(); }
};
using Arrays = std::map<std::string, Array>;

enum class Backend : uint8_t { rtl, golden };
const char* to_string(Backend b);

struct Options {
  Backend backend = Backend::rtl;
  unsigned threads = 0;  // threads of the RTL model: 0 picks (sim::Core::auto_threads)
  sim::RunOptions sim;   // RTL: check mode, idle skipping, waveforms, progress, stall limit
};

struct Result {
  Backend backend = Backend::rtl;
  unsigned threads = 0;  // threads the RTL model ran on (0 on the golden model)
  // RTL: cycles, time, counters, per-stream statistics and instruction records. Golden model:
  // the instruction and DMA transfer counts only (it has no timing).
  sim::RunResult stats;
  Arrays outputs;        // the Program's output tensors, by name
  Arrays updated;        // inputs whose contents the run changed (arguments a kernel writes into)
};

// Runs `prog` with `inputs` (every input tensor of the Program, by name, of its dtype and
// element count) on the chosen backend and returns its outputs. Throws InputError for a missing,
// unknown or mis-sized input and SimError for what goes wrong in the run (a deadlock, a stall,
// in check mode the first RTL/golden difference).
Result run_program(const Program& prog, const Preset& preset, const Arrays& inputs, const Options& opt);

// Random inputs, as the handouts' np.random.rand: uniform in [lo, hi) as float, rounded to the
// dtype, drawn from one generator seeded with `seed` for all inputs in declaration order.
struct Fill {
  uint64_t seed = 0;
  float lo = 0.0f, hi = 1.0f;
  bool no_negative_zero = false;  // a value that rounds to -0 becomes +0 (a transpose maps -0 to +0)
};
Array random_array(const kernels::TensorSpec& spec, std::mt19937_64& rng, const Fill& fill);

// An output against its reference: equal bits, or close. An exact kernel's output is close in the
// sense of numpy.allclose with tolerances that suit the dtype. A kernel that sums in fp32 in the
// tensor engine's order (kernels::ErrorBound: `magnitude` holds each element's sum of |terms|,
// `roundings` their count n) is close within the forward error bound of that accumulation:
//   |out - ref| <= gamma(n) (1 + u_dt) sum|terms| + u_dt (|out| + |ref|) + 2 eta_dt
// gamma(n) = n u / (1 - n u), u = 2^-24 the fp32 unit roundoff; u_dt and eta_dt the unit roundoff
// and smallest subnormal of the output's dtype (each side rounded once to it). `rule` says which.
struct Compare {
  bool exact = true, close = true;
  uint64_t elements = 0, mismatches = 0, first = 0;
  double max_abs_err = 0;
  double max_bound_ratio = 0;  // the largest |out - ref| / bound (bounded compare)
  std::string rule;
};
Compare compare(const Array& got, const Bytes& want, const std::vector<double>* magnitude = nullptr,
                int64_t roundings = 0);

// Refuses a file the run is to write that cannot be written (its folder missing or read-only, a
// directory in its place), before the run, so that a typo in an output path does not cost the
// run: InputError naming `what` (the option or variable that gave it) and `path`.
void check_writable(const std::string& what, const std::string& path);

// A kernel run end to end.
struct KernelRequest {
  kernels::Args args;
  const Preset* preset = nullptr;      // trn2 when null
  Arrays inputs;                       // given inputs, by name; the others random (fill)
  Fill fill;
  std::optional<Program> image;        // run this Program instead of tracing (must be the kernel's)
  std::string image_origin = "the image";  // how messages name it
  nki::TraceOptions trace;             // the trace's hooks (progress, polling); its queues are args.dma_queues
};

struct KernelRun {
  const kernels::Kernel* kernel = nullptr;
  const Preset* preset = nullptr;
  kernels::Values values;
  Program program;
  Arrays inputs;                       // every input, as run
  Result result;
  kernels::ByteMap reference;          // the expected outputs (empty when not asked for)
  std::map<std::string, Compare> compare;
  bool checked = false;                // compared with the reference
  bool correct = true;                 // every output close to its reference (true when not checked)
  bool exact = true;                   // ... and equal to it bit for bit
};

// The parameter values (sizes read off given inputs where the kernel declares so), the Program
// and the inputs. Throws KernelError for a kernel that breaks a rule (NKI's words) and InputError
// for inputs that do not fit (naming their origin).
KernelRun prepare(const KernelRequest& req);
// Runs a prepared kernel and, with `reference`, compares its outputs with the reference.
void execute(KernelRun& run, const Options& opt, bool reference = true);
// prepare + execute.
KernelRun run_kernel(const KernelRequest& req, const Options& opt, bool reference = true);

}  // namespace ncore::run
