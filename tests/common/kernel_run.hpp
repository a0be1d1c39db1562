// The tests' one way to run a declared kernel: the run pipeline (sim/run) with random inputs
// uniform in [lo, hi), on the single-thread RTL model unless told otherwise, with a reference
// check. Helpers read the results as floats.
#pragma once

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "ncore/numerics.hpp"
#include "run/pipeline.hpp"

namespace testing {

struct RunSettings {
  const char* preset = "trn2";
  bool check = true;       // RTL: every instruction against the golden model
  bool skip = true;        // RTL: skip idle cycles
  uint64_t seed = 1;
  float lo = -4.0f, hi = 4.0f;
  bool no_negative_zero = false;
  ncore::run::Backend backend = ncore::run::Backend::rtl;
  unsigned threads = 1;
  std::function<void(ncore::GoldenModel&)> golden_setup;
};

inline ncore::run::KernelRun run_kernel(const kernels::Args& a, const RunSettings& s = {}) {
  ncore::run::KernelRequest req;
  req.args = a;
  req.preset = ncore::find_preset(s.preset);
  req.fill = {s.seed, s.lo, s.hi, s.no_negative_zero};
  ncore::run::Options opt;
  opt.backend = s.backend;
  opt.threads = s.threads;
  opt.sim.check = s.check;
  opt.sim.skip_idle = s.skip;
  opt.sim.golden_setup = s.golden_setup;
  return ncore::run::run_kernel(req, opt);
}

// An array's elements widened to float (exactly).
inline std::vector<float> floats(const ncore::run::Array& a) {
  const unsigned esz = ncore::isa::dtype_bytes(a.dtype);
  std::vector<float> v(a.bytes.size() / esz);
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, a.bytes.data() + i * esz, esz);
    v[i] = ncore::num::to_float(bits, a.dtype);
  }
  return v;
}

// The kernel's (first) output and its reference, as bytes.
inline const ncore::run::Bytes& output(const ncore::run::KernelRun& r) {
  return r.result.outputs.at(r.kernel->outputs.at(0).name).bytes;
}
inline const ncore::run::Bytes& expected(const ncore::run::KernelRun& r) {
  return r.reference.at(r.kernel->outputs.at(0).name);
}

}  // namespace testing
