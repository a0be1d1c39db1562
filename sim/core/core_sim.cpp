// Core::get: the per-preset SystemC top levels, all elaborated before the first run because
// SystemC allows one elaboration per process. Each Verilated model is a shared module
// (core_model.cpp) loaded here; a model not built yet is built on its first use.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <thread>

#include <verilated.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/core_sim.hpp"
#include "core_models.hpp"
#include "ncore/error.hpp"
#include "ncore/isa_gen.hpp"
#include "trace/rtl_assert.hpp"

namespace ncore::sim {
namespace {

// The PE array of this process's models (Core::set_pe_model): from NCORE_PE_MODEL, else "rtl".
std::string& pe_choice() {
  static std::string pe = [] {
    const char* e = std::getenv("NCORE_PE_MODEL");
    return std::string(e && *e ? e : "rtl");
  }();
  return pe;
}
bool g_elaborated = false;

void check_pe_model(const std::string& pe) {
  if (pe != "rtl" && pe != "fast")
    throw InputError(fmt::format("PE model '{}' is not one of rtl, fast (NCORE_PE_MODEL, --pe-model)", pe));
}

const ModelInfo* find_model(const std::string& preset, unsigned threads) {
  for (const auto& m : kModels)
    if (preset == m.preset && threads == m.threads && pe_choice() == m.pe) return &m;
  return nullptr;
}

// Where a model's module is: $NCORE_MODEL_DIR, else the build's own directory.
std::string model_path(const ModelInfo& m) {
  const char* dir = std::getenv("NCORE_MODEL_DIR");
  return fmt::format("{}/libncore_model_{}.so", dir && *dir ? dir : kModelDir, m.name);
}

bool model_built(const ModelInfo& m) {
  struct stat st {};
  return ::stat(model_path(m).c_str(), &st) == 0;
}

// Builds a model that is not built yet, in the build directory this simulator comes from (unless
// NCORE_NO_MODEL_BUILD is set), saying so: a first `make sim` builds the one model it runs.
void build_model(const ModelInfo& m) {
  const std::string target = fmt::format("ncore_model_{}", m.name);
  const char* no_build = std::getenv("NCORE_NO_MODEL_BUILD");
  struct stat st {};
  const bool have_build = ::stat(fmt::format("{}/CMakeCache.txt", kBuildDir).c_str(), &st) == 0;
  if ((no_build && *no_build) || !have_build || std::getenv("NCORE_MODEL_DIR"))
    throw SimError(fmt::format("the {} RTL model ({}) is not built: build it with `cmake --build {} --target {}`",
                               m.name, model_path(m), kBuildDir, target));
  // One build at a time: processes started together (a harness's cases) wait for the first.
  const std::string lock_path = fmt::format("{}/.ncore_model_build.lock", kBuildDir);
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock >= 0) ::flock(lock, LOCK_EX);
  if (model_built(m)) {
    if (lock >= 0) ::close(lock);
    return;
  }
  const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  const std::string cmd = fmt::format("\"{}\" --build \"{}\" --target {} -j {}", kCmakeCommand, kBuildDir, target, jobs);
  std::fprintf(stderr, "ncore: building the %s RTL model on its first use (%s); this takes a few minutes, once\n",
               m.name, cmd.c_str());
  std::fflush(stderr);
  const int rc = std::system((cmd + " >&2").c_str());
  if (lock >= 0) ::close(lock);
  if (rc != 0 || !model_built(m))
    throw SimError(fmt::format("building the {} RTL model failed (`{}` exited with status {})", m.name, cmd, rc));
}

// Loads a model's module and constructs its core.
Core* load_model(const ModelInfo& m, const Preset& p) {
  const std::string path = model_path(m);
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw SimError(fmt::format("cannot load the {} RTL model: {}", m.name, ::dlerror()));
  using MakeFn = Core* (*)(const Preset&);
  auto make = reinterpret_cast<MakeFn>(::dlsym(h, "ncore_make_core"));
  if (!make) throw SimError(fmt::format("{} is not an RTL model module (no ncore_make_core)", path));
  return make(p);
}

// The cores of this process, built on the first call: the presets asked for then (their models
// built now if they are not yet) and every other preset whose model is built, each with the
// model of the thread count asked for then where the preset has one.
std::map<std::string, std::unique_ptr<Core>>& cores(const std::vector<std::string>& required, unsigned threads) {
  static std::map<std::string, std::unique_ptr<Core>> m = [&required, threads] {
    check_pe_model(pe_choice());
    g_elaborated = true;
    // A Verilated model on N threads needs a context with N threads, set before any model exists.
    if (threads > 1) Verilated::defaultContextp()->threads(threads);
    std::map<std::string, std::unique_ptr<Core>> all;
    for (const auto& info : kModels) {
      if (all.count(info.preset)) continue;
      const bool needed = std::find(required.begin(), required.end(), info.preset) != required.end();
      const ModelInfo* pick = find_model(info.preset, threads);
      if (!pick || (!needed && !model_built(*pick))) pick = find_model(info.preset, 1);
      if (!model_built(*pick)) {
        if (!needed) continue;
        build_model(*pick);
      }
      // (a preset this run does not need, whose what-if values break one of its rules, is left out)
      const Preset* p = nullptr;
      try {
        p = find_preset(pick->preset);
      } catch (const InputError&) {
        if (needed) throw;
        continue;
      }
      if (!p) throw SimError(fmt::format("preset {} is not defined", pick->preset));
      all[pick->preset].reset(load_model(*pick, *p));
    }
    return all;
  }();
  // Coverage builds: the counts are written at exit, by a handler registered now that the cores
  // exist, so that it runs before they are destroyed.
  rtl::write_coverage_at_exit();
  return m;
}

}  // namespace

void Core::set_pe_model(const std::string& pe) {
  check_pe_model(pe);
  if (g_elaborated && pe != pe_choice())
    throw SimError(fmt::format("this process elaborated its RTL models with the {} PE array and SystemC elaborates "
                               "once per process: a run with the {} PE array needs a new process",
                               pe_choice(), pe));
  pe_choice() = pe;
}

const std::string& Core::pe_model() {
  check_pe_model(pe_choice());
  return pe_choice();
}

Core& Core::get(const Preset& preset, unsigned threads) {
  check_pe_model(pe_choice());
  if (!find_model(preset.name, 1))
    throw SimError(fmt::format("preset '{}' has no RTL model{} in this simulator (available: {})", preset.name,
                               pe_choice() == "rtl" ? "" : " with the " + pe_choice() + " PE array",
                               fmt::join(available_presets(), ", ")));
  if (!find_model(preset.name, threads))
    throw SimError(fmt::format("preset '{}' has no {}-thread RTL model with the {} PE array in this simulator (its "
                               "models run on {} thread(s))",
                               preset.name, threads, pe_choice(), fmt::join(thread_counts(preset.name), " or ")));
  auto& all = cores({preset.name}, threads);
  const auto it = all.find(preset.name);
  if (it == all.end())
    throw SimError(fmt::format("this process elaborated the RTL models that were built when it made its first core, "
                               "and the {} model was not (SystemC elaborates once per process): build it "
                               "(`cmake --build {} --target ncore_model_{}`) and run again",
                               preset.name, kBuildDir, find_model(preset.name, threads)->name));
  Core& c = *it->second;
  if (c.threads() != threads)
    throw SimError(fmt::format("this process built the {} core on {} thread(s) and SystemC elaborates once per "
                               "process: a run on {} thread(s) needs a new process",
                               preset.name, c.threads(), threads));
  return c;
}

void Core::prepare(const std::vector<std::string>& presets, unsigned threads) {
  check_pe_model(pe_choice());
  for (const auto& name : presets)
    if (!find_model(name, 1))
      throw SimError(fmt::format("preset '{}' has no RTL model in this simulator (available: {})", name,
                                 fmt::join(available_presets(), ", ")));
  cores(presets, threads);
}

std::vector<std::string> Core::available_presets() {
  std::vector<std::string> v;
  for (const auto& m : kModels)
    if (pe_choice() == m.pe && std::find(v.begin(), v.end(), m.preset) == v.end()) v.emplace_back(m.preset);
  return v;
}

std::vector<unsigned> Core::thread_counts(const std::string& preset) {
  std::vector<unsigned> v;
  for (const auto& m : kModels)
    if (preset == m.preset && pe_choice() == m.pe) v.push_back(m.threads);
  return v;
}

unsigned Core::auto_threads(const Preset& preset, const Program& prog) {
  if (!find_model(preset.name, 2) || std::thread::hardware_concurrency() < 2) return 1;
  const auto pe = static_cast<unsigned>(StreamKind::pe);
  if (prog.streams.size() <= pe) return 1;
  for (const auto& in : prog.streams[pe].insns)
    if (in.insn.opcode == isa::Opcode::multiply_moving) return 2;
  return 1;
}

void set_waves(RunOptions& opt, const std::string& file, const std::vector<std::string>& scopes,
               const std::string& window, const WaveNames& names) {
  if (file.empty() && (!scopes.empty() || !window.empty()))
    throw InputError(fmt::format("{} and {} need {} FILE.fst", names.scopes, names.window, names.file));
  opt.waves = file;
  opt.waves_scopes = scopes;
  for (const auto& name : scopes) {
    std::vector<std::string> known;
    for (const auto& w : kWaveScopes) known.emplace_back(w.name);
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InputError(fmt::format("{} {}: unknown scope (known: {})", names.scopes, name, fmt::join(known, ", ")));
  }
  if (window.empty()) return;
  const auto colon = window.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    size_t used = 0;
    if (colon > 0) {
      opt.waves_start = std::stoull(window.substr(0, colon), &used);
      if (used != colon) throw std::invalid_argument("start");
    }
    if (colon + 1 < window.size()) {
      opt.waves_end = std::stoull(window.substr(colon + 1), &used);
      if (used != window.size() - colon - 1) throw std::invalid_argument("end");
    }
  } catch (const std::exception&) {
    throw InputError(fmt::format("{} {}: expected START:END in cycles (either may be empty)", names.window, window));
  }
  if (opt.waves_start >= opt.waves_end)
    throw InputError(fmt::format("{} {}: START must be below END", names.window, window));
}

}  // namespace ncore::sim
