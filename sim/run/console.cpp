// Progress lines and Ctrl-C; see console.hpp.
#include "run/console.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstring>

#include "ncore/interrupt.hpp"

namespace ncore::run {
namespace {

void on_sigint(int) {
  if (interrupt::requested()) {  // a second Ctrl-C: stop now, as the default action does
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
    return;
  }
  interrupt::request();
}

// 12345678 -> "12,345,678"
std::string grouped(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string duration(double s) {
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{}:{:02d} min", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}:{:02d} h", static_cast<int>(s) / 3600, (static_cast<int>(s) / 60) % 60);
}

}  // namespace

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

SigintGuard::SigintGuard() {
  interrupt::clear();
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking read returns, and the loop sees the request
  sigaction(SIGINT, &sa, &old_);
}

SigintGuard::~SigintGuard() { sigaction(SIGINT, &old_, nullptr); }

Progress::Progress(std::string who, bool enabled) : who_(std::move(who)), enabled_(enabled && stderr_is_terminal()) {}

Progress::~Progress() { done(); }

void Progress::show(const std::string& line) {
  if (!enabled_) return;
  const size_t pad = width_ > line.size() ? width_ - line.size() : 0;
  std::fprintf(stderr, "\r%s%*s", line.c_str(), static_cast<int>(pad), "");
  std::fflush(stderr);
  width_ = line.size();
  shown_ = true;
}

void Progress::done() {
  if (shown_) {
    std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }
  shown_ = false;
  width_ = 0;
}

void Progress::trace(uint64_t instructions, double seconds) {
  show(fmt::format("{} tracing the kernel: {} instructions so far, {}", who_, grouped(instructions), duration(seconds)));
}

void Progress::run(uint64_t cycle, double mhz, uint64_t done, uint64_t total, double seconds) {
  constexpr int kBar = 24;
  const double f = total ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
  const int fill = static_cast<int>(f * kBar);
  std::string bar(static_cast<size_t>(fill), '#');
  bar.append(static_cast<size_t>(kBar - fill), '.');
  std::string left = "time left unknown";
  if (done > 0 && done < total) left = "about " + duration(seconds * (1.0 - f) / f) + " left";
  show(fmt::format("{} [{}] {:3.0f}% {} of {} instructions, cycle {} ({:.1f} us), {}, {}", who_, bar, 100.0 * f,
                   grouped(done), grouped(total), grouped(cycle), static_cast<double>(cycle) / mhz, duration(seconds),
                   left));
}

void Progress::attach(nki::TraceOptions& o) {
  if (!enabled_) return;
  o.progress = [this](uint64_t n, double s) { trace(n, s); };
}

void Progress::attach(sim::RunOptions& o, double mhz) {
  if (!enabled_) return;
  o.progress_seconds = 2.0;
  run_start_ = std::chrono::steady_clock::now();
  o.progress = [this, mhz](uint64_t cyc, uint64_t done, uint64_t total) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count();
    run(cyc, mhz, done, total, s);
  };
}

}  // namespace ncore::run
