// Core::get: the per-preset SystemC top levels, all elaborated before the first run because
// SystemC allows one elaboration per process.
#include <map>
#include <memory>

#include <fmt/format.h>

#include "core_presets.hpp"
#include "core_sim.hpp"
#include "ncore/error.hpp"

namespace ncore::sim {
namespace {

struct Builder {
  const char* preset;
  Core* (*make)(const Preset&);
};
constexpr Builder kBuilders[] = {{"trn2", make_core_trn2}, {"trn1", make_core_trn1}};

std::map<std::string, std::unique_ptr<Core>>& cores() {
  static std::map<std::string, std::unique_ptr<Core>> m = [] {
    std::map<std::string, std::unique_ptr<Core>> all;
    for (const auto& b : kBuilders) {
      const Preset* p = find_preset(b.preset);
      if (!p) throw SimError(fmt::format("preset {} is not defined", b.preset));
      all[b.preset].reset(b.make(*p));
    }
    return all;
  }();
  return m;
}

}  // namespace

Core& Core::get(const Preset& preset) {
  auto& m = cores();
  auto it = m.find(preset.name);
  if (it == m.end())
    throw SimError(fmt::format("preset '{}' has no RTL model in this simulator (available: {})", preset.name,
                               fmt::join(available_presets(), ", ")));
  return *it->second;
}

std::vector<std::string> Core::available_presets() {
  std::vector<std::string> v;
  for (const auto& b : kBuilders) v.emplace_back(b.preset);
  return v;
}

}  // namespace ncore::sim
