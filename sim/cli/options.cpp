// ncore-sim's command line, built from the kernel declarations. See options.hpp.
#include "cli/options.hpp"

#include <CLI/CLI.hpp>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <iterator>
#include <set>
#include <sstream>

#include "core/core_sim.hpp"
#include "ncore/preset_values.hpp"
#include "ncore/version.hpp"
#include "kernels/kernel.hpp"

namespace ncore::cli {
namespace {

// A flag shared by kernels: the parameter (or input) it sets for each, and the help lines.
struct SharedFlag {
  std::string help;
  bool is_switch = false;
  bool is_file = false;          // an input's .npy file
  int64_t value = 0;             // integer options
  std::map<std::string, std::string> target;  // kernel -> parameter or input name
  std::string file;              // input file options
  bool zero_ok = false;          // 0 stands for a default taken from another parameter
};

// An integer parameter's check: a positive integer (or 0 where it means a default), saying the
// bound it breaks. (CLI::PositiveNumber's message names a range up to the largest double.)
CLI::Validator positive_integer(bool zero_ok) {
  return CLI::Validator(
      [zero_ok](std::string& s) -> std::string {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range)
          return fmt::format("{} is not an integer in the 64-bit range (at most {})", s, INT64_MAX);
        if (ec != std::errc() || end != s.data() + s.size()) return fmt::format("'{}' is not an integer", s);
        if (v >= 1 || (zero_ok && v == 0)) return "";
        return fmt::format("must be {}, got {}",
                           zero_ok ? "a positive integer (1 or more), or 0 for the default" : "a positive integer (1 or more)", v);
      },
      zero_ok ? "INT >= 0" : "INT >= 1");
}

// The kernel's name from argv ("--kernel X" or "--kernel=X"), or "".
std::string kernel_in(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--kernel" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--kernel=", 0) == 0) return args[i].substr(9);
  }
  return "";
}


// The option name of an argument ("-n" of "-n" and of "--n=5"), or "" for a value.
std::string flag_of(const std::string& a) {
  if (a.size() < 2 || a[0] != '-' || std::isdigit(static_cast<unsigned char>(a[1]))) return "";
  return a.substr(0, a.find('='));
}

// --example: the kernel's declared example arguments in its place, but for the options given on
// the command line too, which take the example's place (`--example -n 512`). False when
// --example names no known kernel.
bool expand_example(std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--example") continue;
    const std::string k = kernel_in(args);
    const kernels::Kernel* decl = nullptr;
    for (const kernels::Kernel* d : kernels::all())
      if (d->name == k) decl = d;
    if (!decl) return false;
    std::istringstream in(decl->example);
    std::vector<std::string> ex{std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
    std::set<std::string> given;
    for (const auto& a : args) given.insert(flag_of(a));
    std::vector<std::string> keep;
    bool skipping = false;
    for (const auto& a : ex) {
      const std::string f = flag_of(a);
      if (!f.empty()) skipping = given.count(f) > 0;
      if (!skipping) keep.push_back(a);
    }
    args.erase(args.begin() + static_cast<long>(i));
    args.insert(args.begin() + static_cast<long>(i), keep.begin(), keep.end());
    break;
  }
  return true;
}

// An option that takes one value given twice: said by name (CLI11's own message counts values).
// Returns the message, or "".
std::string repeated_option(const std::vector<std::string>& args) {
  static const std::set<std::string> repeatable = {"--input", "--waves-scope"};
  std::map<std::string, int> seen;
  for (const auto& a : args) {
    const std::string f = flag_of(a);
    if (f.empty() || repeatable.count(f)) continue;
    if (++seen[f] == 2) return fmt::format("{} is given twice: give it once", f);
  }
  return "";
}

// The kernels' parameters and input files: one shared flag per option name, in declaration order.
struct KernelFlags {
  std::vector<std::string> order;
  std::map<std::string, SharedFlag> flags;
  std::map<std::string, CLI::Option*> opts;
};

void add_kernel_options(CLI::App& app, Options& o, KernelFlags& kf) {
  std::vector<std::string> names;
  std::string kernel_help = "kernel to run:";
  for (const kernels::Kernel* k : kernels::all()) {
    names.push_back(k->name);
    kernel_help += "\n  " + k->name + ": " + k->doc;
  }
  app.add_option("--kernel", o.kernel, kernel_help)->required()->check(CLI::IsMember(names));
  for (const kernels::Kernel* k : kernels::all()) {
    for (const kernels::Param& p : k->params) {
      auto [it, fresh] = kf.flags.try_emplace(p.flag);
      if (fresh) kf.order.push_back(p.flag);
      SharedFlag& f = it->second;
      f.is_switch = p.is_switch;
      f.zero_ok |= !p.default_from.empty();
      f.target[k->name] = p.name;
      std::string line = p.help;
      if (!p.is_switch && !p.required && p.default_from.empty()) line += fmt::format(" (default {})", p.def);
      f.help += fmt::format("{}{}: {}", f.help.empty() ? "" : "; ", k->name, line);
    }
    for (const kernels::TensorDecl& t : k->inputs) {
      if (t.file_flag.empty()) continue;
      auto [it, fresh] = kf.flags.try_emplace(t.file_flag);
      it->second.is_file = true;
      if (fresh) {
        kf.order.push_back(t.file_flag);
        it->second.help = fmt::format("input {} ({}) from a .npy file, for kernel", t.name, t.help);
      }
      it->second.target[k->name] = t.name;
      it->second.help += " " + k->name;
    }
  }
  for (const std::string& flag : kf.order) {
    SharedFlag& f = kf.flags.at(flag);
    if (f.is_switch)
      kf.opts[flag] = app.add_flag(flag, f.help);
    else if (f.is_file)
      kf.opts[flag] = app.add_option(flag, f.file, f.help);
    else
      kf.opts[flag] = app.add_option(flag, f.value, f.help)->check(positive_integer(f.zero_ok));
  }
}

// The simulator's own options.
void add_run_options(CLI::App& app, Options& o, std::vector<std::string>& input_files) {
  app.add_option("--dtype", o.dtype, "element type: fp32, bf16 or fp16 (default fp32)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--config", o.config, "hardware configuration: trn2 (default) or trn1")
      ->check(CLI::IsMember({"trn2", "trn1"}));
  app.add_option("--set", o.sets,
                 "what-if hardware: run the preset with a parameter changed, NAME=VALUE (repeatable; also "
                 "$NCORE_SET=NAME=VALUE,...): the timing parameters (" + timing_parameter_names() + "); a parameter "
                 "the RTL is built with is refused (docs/sweeps.md)");
  app.add_option("--seed", o.seed, "seed of the random inputs (default 0)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            return !s.empty() && s[0] == '-' ? fmt::format("must be a non-negative integer, got {}", s) : "";
          },
          "INT >= 0"));
  app.add_option("--dma-queues", o.dma_queues, "DMA queues the kernel's transfers are spread over (default 4)")
      ->check(CLI::Range(1, 16));
  app.add_option("--threads", o.threads,
                 "threads the RTL model runs on: 1, 2 (trn2) or auto (default: 2 when the kernel uses the tensor "
                 "engine and the machine has two cores, else 1)");
  app.add_option("--pe-model", o.pe_model,
                 "the RTL model's PE array: rtl (default, or $NCORE_PE_MODEL) or fast (simulation-only: the same cycles "
                 "and bits, each column's sums computed in C++ when it enters the array; one thread)")
      ->check(CLI::IsMember({"rtl", "fast"}));
  app.add_flag("--check", o.check, "compare every instruction's result with the golden model as it completes");
  app.add_option("--backend", o.backend, "rtl (default): cycle-level RTL; golden: functional model only, no timing")
      ->check(CLI::IsMember({"rtl", "golden"}));
  app.add_option("--input", input_files,
                 "input NAME=FILE.npy (repeatable), any input of the kernel by name; float32 (rounded to the dtype), "
                 "float16 for fp16 kernels, '<u2' bit patterns or float32 for bf16, integer or bool arrays for "
                 "the integer tensors of a Program image");
  app.add_option("--out", o.out_path, "write the output to FILE.npy (bf16 output is written as float32)");
  app.add_option("--json", o.json_path, "write the figures as JSON to FILE");
  app.add_option("--listing", o.listing_path, "write the Program's readable listing to FILE");
  app.add_option("--save-image", o.image_out, "write the Program's binary image to FILE");
  app.add_option("--image", o.image_in, "run this Program image instead of tracing the kernel");
  app.add_option("--profile", o.profile_name,
                 "profile the run: write NAME.summary.json (neuron-profile's metrics), NAME.trace.json (Chrome/Perfetto "
                 "trace events) and NAME.timeline.html (a self-contained timeline page), and print the summary; the "
                 "golden backend writes the counts only");
  app.add_option("--records", o.records_path,
                 "write each instruction's timing as CSV: when its sequencer reached it, issued it (wait satisfied), "
                 "the engine started it, and it completed (cycles)");
  std::string scope_help = "limit the dump to these scopes (comma-separated):";
  for (const auto& w : sim::kWaveScopes) scope_help += std::string("\n  ") + w.name + ": " + w.doc;
  app.add_option("--waves", o.waves, "dump the RTL's signals to FILE.fst (FST, for GTKWave; waves/ has save files)");
  app.add_option("--waves-scope", o.waves_scopes, scope_help)->delimiter(',');
  app.add_option("--waves-window", o.waves_window, "dump only cycles START:END (either may be empty)");
  app.add_flag("--no-skip", o.no_skip, "clock every cycle, also idle ones (same cycle count, slower)");
  app.add_flag("-q,--quiet", o.quiet, "no progress line on long runs");
  app.add_flag("--no-reference", o.no_reference,
               "do not compare with the built-in C++ reference (for callers that check the --out file themselves)");
  app.add_option("--print", o.print,
                 "print a field of the kernel's declaration and exit: example (the arguments `make sim` and --example "
                 "use) or waves (its GTKWave save file in waves/)")
      ->check(CLI::IsMember({"example", "waves"}));
  app.add_flag("--example", "run the kernel with its declared example arguments (see --print example)");
  app.footer("Exit status: 0 correct, 1 wrong result, 2 bad input (arguments, files, a kernel that breaks a hardware "
             "rule), 3 simulation error (check-mode difference, deadlock, stall), 130 interrupted (Ctrl-C).");
}

// What was given for the chosen kernel: its parameters and input files. False (after a message)
// for an option of another kernel or a malformed --input.
bool collect_given(const KernelFlags& kf, const std::vector<std::string>& input_files, Options& o) {
  const kernels::Kernel& k = kernels::find(o.kernel);
  for (const std::string& flag : kf.order) {
    if (kf.opts.at(flag)->count() == 0) continue;
    const SharedFlag& f = kf.flags.at(flag);
    auto it = f.target.find(k.name);
    if (it == f.target.end()) {
      std::vector<std::string> owners;
      for (const auto& [kernel, name] : f.target) owners.push_back(kernel);
      std::cerr << fmt::format("error: {} is an option of kernel{} {}, not of {}\n", flag, owners.size() > 1 ? "s" : "",
                               fmt::join(owners, ", "), k.name);
      return false;
    }
    if (f.is_file) {
      o.files[it->second] = f.file;
      o.file_given[it->second] = flag + " " + f.file;
    }
    else
      o.params[it->second] = f.is_switch ? 0 : f.value;  // a switch: turned over below
  }
  for (const kernels::Param& p : k.params)
    if (p.is_switch && o.params.count(p.name)) o.params[p.name] = p.def ? 0 : 1;
  for (const auto& spec : input_files) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      std::cerr << fmt::format("error: --input {}: expected NAME=FILE.npy\n", spec);
      return false;
    }
    const std::string name = spec.substr(0, eq);
    if (o.file_given.count(name)) {
      std::cerr << fmt::format("error: --input {} and {} both give input '{}': give it once\n", spec,
                               o.file_given.at(name), name);
      return false;
    }
    o.files[name] = spec.substr(eq + 1);
    o.file_given[name] = "--input " + spec;
  }
  return true;
}

}  // namespace

int parse(int argc, char* argv[], Options& o) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!expand_example(args)) {
    std::cerr << "error: --example needs --kernel NAME (a known kernel)\n";
    return 2;
  }
  if (const std::string twice = repeated_option(args); !twice.empty()) {
    std::cerr << "error: " << twice << "\n";
    return 2;
  }
  CLI::App app{"ncore-sim: run an NKI-style kernel cycle by cycle on the NeuronCore RTL model"};
  app.set_version_flag("--version", version_line("ncore-sim"));
  KernelFlags kf;
  std::vector<std::string> input_files;
  add_kernel_options(app, o, kf);
  add_run_options(app, o, input_files);
  try {
    std::vector<std::string> rev(args.rbegin(), args.rend());  // CLI11 takes the arguments reversed
    app.parse(rev);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (!collect_given(kf, input_files, o)) return 2;
  if (!o.print.empty()) {
    const kernels::Kernel& k = kernels::find(o.kernel);
    std::cout << (o.print == "example" ? k.example : k.waves) << "\n";
    return 0;
  }
  return -1;
}

}  // namespace ncore::cli
