// ncore-regress: the lockstep regression. Random Programs (program_gen.hpp) run on the RTL in check
// mode, which compares every instruction's result with the golden model's as it completes. A
// mismatch, a hang (no instruction completed for --stall-limit cycles) or a deadlock is shrunk to a
// minimal Program that fails the same way (shrink.hpp), and its image, listing and message are
// written, ready to be added to tests/regress/ as a regression case (replayed with --replay).
//
//   ncore-regress [--preset tiny,trn2] [--seed 1] [--count N] [--minutes M] [--json FILE] [--out DIR]
//   ncore-regress --replay tests/regress/*.ncimg
//   ncore-regress --replay F.ncimg --waves F.fst [--waves-scope pe,psum] [--waves-window START:END]
//   ncore-regress --emit --preset tiny --seed 5 --out DIR      (the image and listing of one Program)
//   ncore-regress --count N --scheduler tcp://HOST:PORT [--chunk C]   (seed ranges on a Dask cluster)
//
// Exit status: 0 every Program passed, 1 a failure was found, 2 bad input, 3 an internal error.
#include <systemc.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/core_sim.hpp"
#include "ncore/error.hpp"
#include "ncore/version.hpp"
#include "program_gen.hpp"
#include "shrink.hpp"

using namespace ncore;
namespace fs = std::filesystem;

namespace {

enum Exit { kOk = 0, kFailed = 1, kBadInput = 2, kInternal = 3 };

struct Options {
  std::vector<std::string> presets{"tiny", "trn2"};
  uint64_t seed = 1;
  std::string pe_model;  // the RTL models' PE array: rtl or fast (empty: $NCORE_PE_MODEL, else rtl)
  uint64_t count = 0;
  double minutes = 0;
  std::string json, out = "regress-out";
  unsigned min_insns = 20, max_insns = 120;
  uint64_t stall_limit = 200000;
  unsigned max_failures = 1;
  bool shrink = true;
  double shrink_minutes = 10;
  std::vector<std::string> replay;
  std::string waves, waves_window;  // --replay of one image: its waveforms
  std::vector<std::string> waves_scopes;
  bool failure_waves = true;        // a failure's shrunk Program re-run with waves around the failure
  std::vector<std::string> weights;  // NAME=N
  bool emit = false;
  bool quiet = false;
  std::string scheduler;  // a Dask scheduler's address (or "local"): seed ranges on its workers
  unsigned workers = 0, chunk = 20;
};

// What went wrong in a run, from the simulator's message.
std::string failure_kind(const std::string& msg) {
  if (msg.rfind("check:", 0) == 0) return "mismatch";
  if (msg.find("no instruction completed") != std::string::npos) return "hang";
  if (msg.rfind("deadlock", 0) == 0) return "deadlock";
  return "error";
}

struct Outcome {
  bool ok = true;
  std::string kind, message;
  sim::RunResult stats;
  uint64_t hbm_hash = 0;  // FNV-1a of the HBM after the run (the Program's stores)
};

Outcome run_checked(const Program& p, const Preset& pr, uint64_t stall_limit,
                    const sim::RunOptions* waves = nullptr) {
  Outcome o;
  std::vector<uint8_t> hbm(p.hbm_bytes, 0);
  sim::RunOptions ro = waves ? *waves : sim::RunOptions{};
  ro.check = true;
  ro.stall_limit = stall_limit;
  try {
    o.stats = sim::Core::get(pr, 1).run(p, hbm, ro);
    o.hbm_hash = 0xcbf29ce484222325ull;
    for (const uint8_t b : hbm) o.hbm_hash = (o.hbm_hash ^ b) * 0x100000001b3ull;
  } catch (const SimError& e) {
    o.ok = false;
    o.message = e.what();
    o.kind = failure_kind(o.message);
  }
  return o;
}

const Preset& preset_named(const std::string& name) {
  const Preset* p = find_preset(name);
  const auto avail = sim::Core::available_presets();
  if (!p || std::find(avail.begin(), avail.end(), name) == avail.end())
    throw InputError(fmt::format("--preset {}: no RTL model of that preset here (available: {})", name,
                                 fmt::join(avail, ", ")));
  return *p;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) throw InputError(fmt::format("cannot write {}", path.string()));
  f << text;
}

struct Totals {
  uint64_t programs = 0, instructions = 0, checked = 0, cycles = 0;
  double rtl_seconds = 0;
};

// The listing's header names what the Program is; the failure's files add how it was found.
nlohmann::json report_failure(const Options& o, const Preset& pr, uint64_t seed, const Outcome& bad,
                              const regress::GenOptions& gopt) {
  nlohmann::json f = {{"preset", pr.name}, {"seed", seed}, {"kind", bad.kind}, {"message", bad.message}};
  fs::create_directories(o.out);
  const std::string stem = fmt::format("{}-seed{}-{}", pr.name, seed, bad.kind);
  const regress::Draft d = regress::draw(pr, seed, gopt);
  Program prog = regress::assemble(pr, d);
  std::string shrunk_msg = bad.message;
  if (o.shrink) {
    std::cout << fmt::format("  shrinking {} seed {} ({} instructions) ...", pr.name, seed, prog.instruction_count())
              << std::endl;
    regress::ShrinkOptions so;
    so.max_seconds = o.shrink_minutes * 60;
    auto fails = [&](const Program& p) {
      const Outcome c = run_checked(p, pr, o.stall_limit);
      if (c.ok || c.kind != bad.kind) return false;
      shrunk_msg = c.message;
      return true;
    };
    const regress::ShrinkResult r = regress::shrink(pr, d, fails, so);
    prog = r.program;  // shrunk_msg is its message: the last candidate that failed is the one kept
    f["shrink"] = {{"tries", r.tries}, {"accepted", r.accepted}, {"instructions_before", r.instructions_before},
                   {"instructions_after", r.instructions_after}, {"complete", r.complete}};
    std::cout << fmt::format("  shrunk to {} instructions in {} tries{}", r.instructions_after, r.tries,
                             r.complete ? "" : " (stopped by the time or try limit)")
              << std::endl;
  }
  const fs::path img = fs::path(o.out) / (stem + ".ncimg"), lst = fs::path(o.out) / (stem + ".lst"),
                 txt = fs::path(o.out) / (stem + ".txt"), fst = fs::path(o.out) / (stem + ".fst");
  prog.save(img.string());
  write_text(lst, prog.listing());
  // The shrunk Program again, with its waveforms around the cycle it failed at (every scope).
  std::string waves_note;
  if (o.failure_waves) {
    const std::string window = regress::failure_window(shrunk_msg);
    sim::RunOptions wo;
    sim::set_waves(wo, fst.string(), {}, window, {"--waves", "--waves-scope", "--waves-window"});
    run_checked(prog, pr, o.stall_limit, &wo);
    waves_note = fmt::format("waveforms: {} ({}; GTKWave: gtkwave {} waves/vector_add.gtkw from the repository "
                             "root)\nagain: ncore-regress --replay {} --waves {}{}\n",
                             fst.string(), window.empty() ? "the whole run" : "cycles " + window, fst.string(),
                             img.string(), fst.string(), window.empty() ? "" : " --waves-window " + window);
    f["waves"] = fst.string();
    f["waves_window"] = window;
  }
  write_text(txt, fmt::format("{} on preset {}, random seed {} (ncore-regress --preset {} --seed {} --count 1 "
                              "--min-insns {} --max-insns {})\n\noriginal:\n{}\n\nshrunk ({} instructions):\n{}\n\n"
                              "replay: ncore-regress --replay {}\n{}",
                              bad.kind, pr.name, seed, pr.name, seed, o.min_insns, o.max_insns, bad.message,
                              prog.instruction_count(), shrunk_msg, img.string(), waves_note));
  f["image"] = img.string();
  f["listing"] = lst.string();
  f["shrunk_message"] = shrunk_msg;
  std::cout << fmt::format("  wrote {}, {} and {}", img.string(), lst.string(), txt.string()) << std::endl;
  return f;
}

// --weight NAME=N: the relative weight of an instruction kind (regress::Weights).
void set_weights(regress::Weights& w, const std::vector<std::string>& given) {
  const std::pair<const char*, unsigned regress::Weights::*> kinds[] = {
      {"dma_copy", &regress::Weights::dma_copy},
      {"tensor_tensor", &regress::Weights::tensor_tensor},
      {"tensor_scalar", &regress::Weights::tensor_scalar},
      {"tensor_copy", &regress::Weights::tensor_copy},
      {"memset", &regress::Weights::memset},
      {"tensor_reduce", &regress::Weights::tensor_reduce},
      {"activation", &regress::Weights::activation},
      {"load_stationary", &regress::Weights::load_stationary},
      {"multiply_moving", &regress::Weights::multiply_moving},
      {"sync", &regress::Weights::sync}};
  for (const std::string& g : given) {
    const auto eq = g.find('=');
    std::string names;
    for (const auto& [name, field] : kinds) {
      names += std::string(names.empty() ? "" : ", ") + name;
      if (eq == std::string::npos || g.substr(0, eq) != name) continue;
      try {
        size_t used = 0;
        const unsigned long v = std::stoul(g.substr(eq + 1), &used);
        if (used != g.size() - eq - 1 || v > 1000) throw std::invalid_argument("range");
        w.*field = static_cast<unsigned>(v);
      } catch (const std::exception&) {
        throw InputError(fmt::format("--weight {}: expected {}=N with N in 0..1000", g, name));
      }
      names.clear();
      break;
    }
    if (!names.empty()) throw InputError(fmt::format("--weight {}: expected NAME=N, NAME one of {}", g, names));
  }
  const regress::Weights& x = w;
  if (x.dma_copy + x.tensor_tensor + x.tensor_scalar + x.tensor_copy + x.memset + x.tensor_reduce + x.activation +
          x.load_stationary + x.multiply_moving + x.sync == 0)
    throw InputError("--weight: every instruction kind has weight 0");
}

int replay(const Options& o) {
  int failed = 0;
  sim::RunOptions waves;
  sim::set_waves(waves, o.waves, o.waves_scopes, o.waves_window, {"--waves", "--waves-scope", "--waves-window"});
  if (!o.waves.empty() && o.replay.size() != 1)
    throw InputError(fmt::format("--waves: give one --replay image ({} given)", o.replay.size()));
  std::vector<Program> programs;
  std::vector<std::string> presets;
  for (const std::string& path : o.replay) {
    programs.push_back(Program::load(path));
    presets.push_back(preset_named(programs.back().preset).name);
  }
  sim::Core::prepare(presets);
  for (size_t i = 0; i < o.replay.size(); ++i) {
    const std::string& path = o.replay[i];
    const Program& p = programs[i];
    const Preset& pr = preset_named(p.preset);
    const Outcome r = run_checked(p, pr, o.stall_limit, o.waves.empty() ? nullptr : &waves);
    if (!o.waves.empty()) std::cout << fmt::format("waveforms written: {}\n", o.waves);
    if (r.ok) {
      std::cout << fmt::format("PASS {}: {} instructions, {} checked, {} cycles\n", path, r.stats.instructions,
                               r.stats.checked_instructions, r.stats.cycles);
    } else {
      ++failed;
      std::cout << fmt::format("FAIL {}: {}\n{}\n", path, r.kind, r.message);
    }
  }
  return failed ? kFailed : kOk;
}

int emit(const Options& o, const regress::GenOptions& gopt) {
  fs::create_directories(o.out);
  for (const std::string& name : o.presets) {
    const Preset& pr = *find_preset(name);
    const Program p = regress::generate(pr, o.seed, gopt);
    const fs::path stem = fs::path(o.out) / fmt::format("{}-seed{}", name, o.seed);
    p.save(stem.string() + ".ncimg");
    write_text(stem.string() + ".lst", p.listing());
    std::cout << fmt::format("{}.ncimg, {}.lst: {} instructions\n", stem.string(), stem.string(), p.instruction_count());
  }
  return kOk;
}

// What a regression found, Program by Program.
struct Campaign {
  Totals all;
  std::map<std::string, Totals> by_preset;
  std::map<std::string, uint64_t> census;
  std::map<std::string, uint64_t> failures_by_kind;
  nlohmann::json failures = nlohmann::json::array();
  // Each Program's cycles and final HBM: runs of the same seeds on the two PE arrays compare them.
  nlohmann::json programs = nlohmann::json::array();
};

// The instructions per opcode and destination dtype, and the census bins no Program hit (returned).
std::vector<std::string> print_census(const Campaign& c, const std::vector<const Preset*>& presets) {
  std::cout << "\ninstructions per opcode and destination dtype:\n";
  std::map<std::string, std::map<std::string, uint64_t>> table;
  for (const auto& [bin, n] : c.census)
    if (bin.rfind("dtype.", 0) == 0) {
      const auto dot = bin.rfind('.');
      table[bin.substr(6, dot - 6)][bin.substr(dot + 1)] = n;
    }
  auto count = [&](const std::string& bin) {
    const auto it = c.census.find(bin);
    return it == c.census.end() ? uint64_t{0} : it->second;
  };
  std::string head = fmt::format("  {:<16} {:>8}", "opcode", "all");
  for (isa::Dtype d : isa::kDtypeValues) head += fmt::format(" {:>8}", isa::to_string(d));
  std::cout << head << "\n";
  for (const auto& [op, m] : table) {
    std::string row = fmt::format("  {:<16} {:>8}", op, count(std::string("opcode.") + op));
    for (isa::Dtype d : isa::kDtypeValues) {
      const auto it = m.find(isa::to_string(d));
      row += fmt::format(" {:>8}", it == m.end() ? 0 : it->second);
    }
    std::cout << row << "\n";
  }
  std::cout << fmt::format("  {:<16} {:>10}\n", "sem_wait", count("opcode.sem_wait"));
  std::vector<std::string> bins, missed;  // every preset's bins, once
  for (const Preset* pr : presets)
    for (const std::string& b : regress::census_bins(*pr))
      if (std::find(bins.begin(), bins.end(), b) == bins.end()) bins.push_back(b);
  for (const std::string& b : bins)
    if (!c.census.count(b)) missed.push_back(b);
  std::cout << fmt::format("census bins hit: {} of {}{}\n", bins.size() - missed.size(), bins.size(),
                           missed.empty() ? "" : fmt::format(" (missed: {})", fmt::join(missed, ", ")));
  return missed;
}

uint64_t failures_of(const Campaign& c, const std::string& kind) {
  const auto it = c.failures_by_kind.find(kind);
  return it == c.failures_by_kind.end() ? 0 : it->second;
}

// The report on stdout; the bins missed.
std::vector<std::string> print_report(const Options& o, const Campaign& c, const std::vector<const Preset*>& presets,
                                      double wall) {
  std::cout << fmt::format("\nncore-regress: presets {}, seeds from {}, {} steps per program, {} PE array\n",
                           fmt::join(o.presets, ","), o.seed, fmt::format("{}-{}", o.min_insns, o.max_insns),
                           sim::Core::pe_model());
  std::cout << fmt::format("{:<8} {:>9} {:>13} {:>13} {:>15} {:>10} {:>10}\n", "preset", "programs", "instructions",
                           "checked", "cycles", "RTL s", "insn/s");
  auto row = [](const std::string& name, const Totals& t, double secs) {
    return fmt::format("{:<8} {:>9} {:>13} {:>13} {:>15} {:>10.1f} {:>10.0f}\n", name, t.programs, t.instructions,
                       t.checked, t.cycles, t.rtl_seconds, secs > 0 ? t.instructions / secs : 0.0);
  };
  for (const auto& [name, t] : c.by_preset) std::cout << row(name, t, t.rtl_seconds);
  std::cout << row("all", c.all, wall);
  std::cout << fmt::format("wall {:.1f} s (generation and checking included): {:.0f} instructions/s\n", wall,
                           wall > 0 ? c.all.instructions / wall : 0.0);
  std::vector<std::string> missed = print_census(c, presets);
  std::cout << fmt::format("mismatches {}, hangs {}, deadlocks {}\n", failures_of(c, "mismatch"),
                           failures_of(c, "hang"), failures_of(c, "deadlock"));
  return missed;
}

void write_json(const Options& o, const Campaign& c, const std::vector<std::string>& missed, double wall) {
  nlohmann::json j;
  j["model_version"] = version();
  j["model_revision"] = revision();
  j["presets"] = o.presets;
  j["pe_model"] = sim::Core::pe_model();
  j["program_results"] = c.programs;
  j["seed"] = o.seed;
  j["steps"] = {o.min_insns, o.max_insns};
  j["programs"] = c.all.programs;
  j["instructions"] = c.all.instructions;
  j["checked_instructions"] = c.all.checked;
  j["cycles"] = c.all.cycles;
  j["wall_seconds"] = wall;
  j["rtl_seconds"] = c.all.rtl_seconds;
  j["instructions_per_second"] = wall > 0 ? c.all.instructions / wall : 0.0;
  for (const auto& [name, t] : c.by_preset)
    j["per_preset"][name] = {{"programs", t.programs},           {"instructions", t.instructions},
                             {"checked_instructions", t.checked}, {"cycles", t.cycles},
                             {"rtl_seconds", t.rtl_seconds}};
  j["mismatches"] = failures_of(c, "mismatch");
  j["hangs"] = failures_of(c, "hang");
  j["deadlocks"] = failures_of(c, "deadlock");
  j["failures"] = c.failures;
  j["census"] = c.census;
  j["census_missed"] = missed;
  std::ofstream f(o.json);
  if (!f) throw InputError(fmt::format("--json {}: cannot open for writing", o.json));
  f << j.dump(2) << "\n";
}

int run(const Options& o) {
  if (!o.pe_model.empty()) sim::Core::set_pe_model(o.pe_model);
  regress::GenOptions gopt;
  gopt.min_insns = o.min_insns;
  gopt.max_insns = o.max_insns;
  set_weights(gopt.weights, o.weights);
  if (o.min_insns == 0 || o.min_insns > o.max_insns)
    throw InputError(fmt::format("--min-insns {} --max-insns {}: need 1 <= min <= max", o.min_insns, o.max_insns));
  if (!o.replay.empty()) return replay(o);
  if (!o.waves.empty() || !o.waves_scopes.empty() || !o.waves_window.empty())
    throw InputError("--waves, --waves-scope and --waves-window go with --replay (a failure found by the regression "
                     "gets its waveforms by itself)");
  std::vector<const Preset*> presets;
  for (const std::string& name : o.presets) presets.push_back(&preset_named(name));
  if (presets.empty()) throw InputError("--preset: no preset given");
  sim::Core::prepare(o.presets);  // one process elaborates every preset it alternates between
  if (o.emit) return emit(o, gopt);
  const uint64_t count = o.count ? o.count : (o.minutes > 0 ? UINT64_MAX : 100);

  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  Campaign c;
  double next_report = 10;
  for (uint64_t k = 0; k < count; ++k) {
    if (o.minutes > 0 && elapsed() >= o.minutes * 60) break;
    const Preset& pr = *presets[k % presets.size()];
    const uint64_t seed = o.seed + k / presets.size();
    const Program p = regress::generate(pr, seed, gopt);
    const Outcome r = run_checked(p, pr, o.stall_limit);
    for (const auto& [bin, n] : regress::census(p)) c.census[bin] += n;
    c.programs.push_back({{"preset", pr.name}, {"seed", seed}, {"ok", r.ok}, {"cycles", r.stats.cycles},
                          {"pe_macs", r.stats.pe_macs}, {"hbm_fnv1a", fmt::format("{:016x}", r.hbm_hash)}});
    for (Totals* x : {&c.all, &c.by_preset[pr.name]}) {
      ++x->programs;
      x->instructions += r.ok ? r.stats.instructions : 0;
      x->checked += r.stats.checked_instructions;
      x->cycles += r.stats.cycles;
      x->rtl_seconds += r.stats.wall_seconds;
    }
    if (!r.ok) {
      ++c.failures_by_kind[r.kind];
      std::cout << fmt::format("FAIL {} seed {}: {}\n{}\n", pr.name, seed, r.kind, r.message) << std::flush;
      if (r.kind == "error") throw std::logic_error("a generated Program was refused: " + r.message);
      c.failures.push_back(report_failure(o, pr, seed, r, gopt));
      if (c.failures.size() >= o.max_failures) break;
    }
    if (!o.quiet && elapsed() >= next_report) {
      std::cout << fmt::format("[{:.0f} s] {} programs, {} instructions ({:.0f}/s), {} failures\n", elapsed(),
                               c.all.programs, c.all.instructions, c.all.instructions / elapsed(), c.failures.size())
                << std::flush;
      next_report = elapsed() + (o.minutes > 2 ? 60 : 10);
    }
  }
  const double wall = elapsed();
  const std::vector<std::string> missed = print_report(o, c, presets, wall);
  if (!o.json.empty()) write_json(o, c, missed, wall);
  uint64_t nfail = 0;
  for (const auto& [kind, n] : c.failures_by_kind) nfail += n;
  return nfail ? kFailed : kOk;
}

// --scheduler: the Programs spread over a Dask cluster by seed range, each range this program on a
// worker, the figures merged (kernels/python/ncore/_regress.py, run by the build's ncore-python).
int run_on_cluster(int argc, char* argv[]) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const fs::path python = self.parent_path().parent_path().parent_path() / "ncore-python";  // build/tb/regress/..
  std::vector<std::string> args = {python.string(), "-m", "ncore._regress", "--binary", self.string()};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::cout.flush();
  ::execv(python.c_str(), cargs.data());
  std::cerr << fmt::format("error: --scheduler: cannot run {}: {}\n", python.string(), std::strerror(errno));
  return kBadInput;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  Options o;
  CLI::App app{"ncore-regress: random Programs on the RTL in check mode (lockstep with the golden model); a "
               "failure is shrunk to a minimal Program and written out"};
  app.set_version_flag("--version", version_line("ncore-regress"));
  app.add_option("--preset", o.presets, "presets to alternate between (comma-separated; default tiny,trn2)")
      ->delimiter(',');
  app.add_option("--seed", o.seed, "first seed (default 1); program k of a preset has seed + k");
  app.add_option("--count", o.count, "programs to run in all (default 100, or no limit with --minutes)");
  app.add_option("--minutes", o.minutes, "stop starting programs after this much wall time")->check(CLI::NonNegativeNumber);
  app.add_option("--min-insns", o.min_insns, "steps drawn per program at least (default 20)");
  app.add_option("--max-insns", o.max_insns, "steps drawn per program at most (default 120)");
  app.add_option("--weight", o.weights,
                 "relative weight of an instruction kind, NAME=N (repeatable): dma_copy (default 20), tensor_tensor "
                 "(10), tensor_scalar (10), tensor_copy (7), memset (4), tensor_reduce (8), activation (10), "
                 "load_stationary (5), multiply_moving (12), sync (6: semaphore episodes)");
  app.add_option("--stall-limit", o.stall_limit, "cycles without a completed instruction that count as a hang (default 200000)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-failures", o.max_failures, "stop after this many failures (default 1)")->check(CLI::PositiveNumber);
  app.add_flag("!--no-shrink", o.shrink, "write a failing Program as it is, without shrinking it");
  app.add_option("--shrink-minutes", o.shrink_minutes, "wall time for shrinking one failure at most (default 10)")
      ->check(CLI::PositiveNumber);
  app.add_option("--out", o.out, "directory for failures' images, listings and messages (default regress-out)");
  app.add_option("--json", o.json, "write the figures as JSON to FILE");
  app.add_option("--pe-model", o.pe_model,
                 "the RTL models' PE array: rtl (default, or $NCORE_PE_MODEL) or fast (simulation-only, the same "
                 "cycles and bits)")
      ->check(CLI::IsMember({"rtl", "fast"}));
  app.add_option("--replay", o.replay, "run these Program images in check mode instead (regression cases)")
      ->check(CLI::ExistingFile);
  app.add_option("--waves", o.waves, "with --replay of one image: dump its RTL signals to FILE.fst (FST, for GTKWave)");
  app.add_option("--waves-scope", o.waves_scopes,
                 "limit the dump to these scopes (comma-separated): seq, dve, act, dma, sbuf, pe, psum")
      ->delimiter(',');
  app.add_option("--waves-window", o.waves_window, "dump only cycles START:END (either may be empty)");
  app.add_flag("!--no-failure-waves", o.failure_waves,
               "do not re-run a failure's shrunk Program to dump its waveforms around the failing cycle");
  app.add_flag("--emit", o.emit, "write the image and listing of --seed's Program for each --preset to --out and exit");
  app.add_flag("-q,--quiet", o.quiet, "no progress lines");
  app.add_option("--scheduler", o.scheduler,
                 "run the --count Programs on this Dask scheduler's workers (tcp://HOST:PORT; local: a local "
                 "cluster), in seed ranges, each an ncore-regress process; the figures as one process gives them");
  app.add_option("--workers", o.workers, "with --scheduler local: worker processes (default: the cores)");
  app.add_option("--chunk", o.chunk, "with --scheduler: Programs per seed range (default 20)")->check(CLI::PositiveNumber);
  app.footer("Exit status: 0 every Program passed, 1 a failure (mismatch, hang, deadlock) was found, 2 bad input, "
             "3 internal error.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kBadInput;
  }
  if (!o.scheduler.empty()) return run_on_cluster(argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    const bool bad_input = dynamic_cast<const InputError*>(&e) || dynamic_cast<const ImageError*>(&e);
    std::cerr << (bad_input ? "error: " : "internal error: ") << e.what() << "\n";
    return bad_input ? kBadInput : kInternal;
  }
}

int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
