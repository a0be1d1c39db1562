// The failures behind rtl_assert.hpp and the DPI-C import the RTL's assertions call.
#include "trace/rtl_assert.hpp"

#include <verilated.h>
#if defined(NCORE_COVERAGE)
#include <verilated_cov.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace ncore::rtl {

namespace {
constexpr size_t kKeep = 16;  // messages kept per failure; the rest are counted
std::atomic<bool> g_failed{false};
std::mutex& failures_mutex() {
  static std::mutex m;
  return m;
}
struct Failures {
  std::vector<std::string> messages;
  uint64_t dropped = 0;
};
Failures& failures() {
  static Failures f;
  return f;
}
}  // namespace

bool assertion_failed() { return g_failed.load(std::memory_order_relaxed); }

std::string take_assertion_failures() {
  std::lock_guard<std::mutex> lock(failures_mutex());
  Failures& f = failures();
  std::string s;
  for (const auto& m : f.messages) s += (s.empty() ? "" : "\n") + m;
  if (f.dropped) s += "\n(and " + std::to_string(f.dropped) + " more)";
  f = Failures{};
  g_failed.store(false, std::memory_order_relaxed);
  return s;
}

std::string assertion_report(uint64_t cycle) {
  return "assertion failed at cycle " + std::to_string(cycle) + ": " + take_assertion_failures();
}

bool rtl_stopped() {
  VerilatedContext* c = Verilated::defaultContextp();
  if (!c->gotError()) return false;
  c->gotError(false);
  c->gotFinish(false);
  return true;
}

void keep_running_on_error() { Verilated::defaultContextp()->fatalOnError(false); }

#if defined(NCORE_COVERAGE)
namespace {
void write_coverage() {
  const char* dir = std::getenv("NCORE_COVERAGE_DIR");
  const std::string path = (dir && *dir ? std::string(dir) : std::string(".")) + "/cov-" +
                           std::to_string(static_cast<long>(getpid())) + ".dat";
  Verilated::defaultContextp()->coveragep()->write(path.c_str());
}
}  // namespace
#endif

void write_coverage_at_exit() {
#if defined(NCORE_COVERAGE)
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(write_coverage); });
#endif
}

}  // namespace ncore::rtl

// The DPI-C import of the RTL's assertions (rtl/*.sv, `ifdef NCORE_ASSERT): one failure, its
// message starting with the failing assertion's hierarchical name.
extern "C" void ncore_assert_fail(const char* msg) {
  std::lock_guard<std::mutex> lock(ncore::rtl::failures_mutex());
  auto& f = ncore::rtl::failures();
  if (f.messages.size() < ncore::rtl::kKeep) f.messages.emplace_back(msg ? msg : "");
  else ++f.dropped;
  ncore::rtl::g_failed.store(true, std::memory_order_relaxed);
}
