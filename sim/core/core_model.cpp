// The SystemC top level of one Verilated model: its port binding (verilated_rtl.hpp) and the
// constructor the simulator calls. Each model is a shared module of its own
// (libncore_model_<name>.so, sim/CMakeLists.txt) that the simulator loads when a run first needs
// it (core_sim.cpp), so a build makes only the models its runs use. This file is compiled once
// per model, with the model's Verilated class (NCORE_MODEL), the preset it was Verilated for
// (NCORE_MODEL_PRESET) and its thread count (NCORE_MODEL_THREADS).
#include <string>

#include NCORE_MODEL_HEADER
#include "core/verilated_rtl.hpp"

namespace {
struct Traits {
  using Model = NCORE_MODEL;
  static constexpr std::string_view kPreset = NCORE_MODEL_PRESET;
  static constexpr unsigned kThreads = NCORE_MODEL_THREADS;
};
}  // namespace

// The loader looks this up by name (dlsym), in this module alone.
extern "C" __attribute__((visibility("default"))) ncore::sim::Core* ncore_make_core(const ncore::Preset& p) {
  const std::string rtl = "ncore_" + std::string(Traits::kPreset);
  return ncore::sim::make_core<Traits>(p, rtl.c_str(), (rtl + "_top").c_str());
}
