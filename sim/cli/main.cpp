// ncore-sim: runs a kernel on the Verilated NeuronCore (or on the golden model alone) and
// reports what run_benchmark.py reports on the real chip: whether the result is right, the
// latency, and the DMA transfer count.
//
//   ncore-sim --kernel stream -n 25600 --free-dim 200 [--check] [--json out.json]
//
// The run itself is the run pipeline's (sim/run); this file turns the command line into a
// request, writes the files asked for and prints the report.
//
// Exit status: 0 result correct, 1 result wrong, 2 bad input (arguments, files, a kernel
// that breaks a hardware rule), 3 simulation error (golden-model mismatch, deadlock, stall),
// 130 interrupted (Ctrl-C: the trace or run stops, waveforms are closed, no output is written).
#include <systemc.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/npy.hpp"
#include "cli/options.hpp"
#include "cli/report.hpp"
#include "ncore/error.hpp"
#include "profile/profile.hpp"
#include "ncore/interrupt.hpp"
#include "ncore/preset_values.hpp"
#include "run/console.hpp"
#include "run/pipeline.hpp"

using namespace ncore;

namespace {

enum Exit { kOk = 0, kWrong = 1, kBadInput = 2, kSimError = 3, kInterrupted = 130 };  // 130: 128 + SIGINT

// The RTL run's options: check mode, skipping, waveforms, the progress line, threads.
run::Options run_options(const cli::Options& o, const Preset& preset, run::Progress& progress) {
  run::Options opt;
  opt.backend = o.backend == "golden" ? run::Backend::golden : run::Backend::rtl;
  opt.sim.check = o.check;
  opt.sim.skip_idle = !o.no_skip;
  sim::set_waves(opt.sim, o.waves, o.waves_scopes, o.waves_window, {"--waves", "--waves-scope", "--waves-window"});
  progress.attach(opt.sim, static_cast<double>(preset.clock_mhz));
  if (!o.pe_model.empty()) sim::Core::set_pe_model(o.pe_model);
  if (o.threads != "auto") {
    const auto counts = sim::Core::thread_counts(preset.name);
    for (unsigned t : counts)
      if (o.threads == std::to_string(t)) opt.threads = t;
    if (opt.threads == 0)
      throw InputError(fmt::format("--threads {}: the {} model{} runs on {} thread{} (or auto)", o.threads, preset.name,
                                   sim::Core::pe_model() == "rtl" ? "" : " with the " + sim::Core::pe_model() + " PE array",
                                   fmt::join(counts, " or "), counts.size() == 1 ? "" : "s"));
  }
  return opt;
}

// Options that only an RTL run honours; the golden model has no timing, waveforms or check mode.
void refuse_golden_only_rtl(const cli::Options& o) {
  if (o.backend != "golden") return;
  const std::pair<bool, const char*> rtl_only[] = {{!o.waves.empty(), "--waves"},
                                                   {!o.records_path.empty(), "--records"},
                                                   {o.check, "--check"},
                                                   {o.no_skip, "--no-skip"},
                                                   {!o.pe_model.empty(), "--pe-model"},
                                                   {o.threads != "auto", "--threads"}};
  for (const auto& [given, flag] : rtl_only)
    if (given)
      throw InputError(fmt::format("{} needs an RTL run: --backend golden runs the golden model alone (no timing, no "
                                   "waveforms, nothing to check against); leave out one of the two",
                                   flag));
}

// Every file the run writes, checked before it starts (a typo in a path does not cost the run).
void check_output_paths(const cli::Options& o) {
  const std::pair<const std::string*, const char*> files[] = {
      {&o.out_path, "--out"},       {&o.json_path, "--json"},          {&o.records_path, "--records"},
      {&o.listing_path, "--listing"}, {&o.image_out, "--save-image"}, {&o.waves, "--waves"}};
  for (const auto& [path, flag] : files)
    if (!path->empty()) run::check_writable(flag, *path);
  if (!o.profile_name.empty()) {
    for (const char* ext : {".summary.json", ".trace.json", ".timeline.html"})
      run::check_writable("--profile " + o.profile_name + ":", o.profile_name + ext);
  }
}

int run_cli(const cli::Options& o) {
  const run::SigintGuard ctrl_c;  // Ctrl-C stops the trace or the run and unwinds (waves closed)
  run::Progress progress("[ncore-sim]", !o.quiet);
  refuse_golden_only_rtl(o);
  check_output_paths(o);
  set_preset_values(o.sets);
  const Preset* preset = find_preset(o.config);
  if (!preset || std::string(preset->name) == "tiny")
    throw InputError(fmt::format("--config {}: unknown configuration (choose trn2 or trn1)", o.config));
  run::KernelRequest req;
  req.args.kernel = o.kernel;
  req.args.given = o.params;
  req.args.dma_queues = o.dma_queues;
  if (!isa::from_string(o.dtype, req.args.dtype))
    throw InputError(fmt::format("--dtype {}: unknown dtype (choose fp32, bf16 or fp16)", o.dtype));
  req.preset = preset;
  req.fill.seed = o.seed;
  for (const auto& [name, path] : o.files) {
    const std::string what = o.file_given.count(name) ? o.file_given.at(name) : path;
    req.inputs[name] = sim::npy_to_array(sim::npy_load(path, what), req.args.dtype, what);
  }
  if (!o.image_in.empty()) {
    req.image = Program::load(o.image_in);
    req.image_origin = "--image " + o.image_in;
  }

  progress.attach(req.trace);
  run::KernelRun r = run::prepare(req);
  progress.done();
  if (!o.listing_path.empty()) {
    std::ofstream out(o.listing_path);
    if (!out) throw InputError(fmt::format("--listing {}: cannot open for writing", o.listing_path));
    out << r.program.listing();
  }
  if (!o.image_out.empty()) {
    try {
      r.program.save(o.image_out);
    } catch (const ImageError& e) {
      throw InputError(fmt::format("--save-image {}: {}", o.image_out, e.what()));
    }
  }

  const run::Options opt = run_options(o, *preset, progress);
  run::execute(r, opt, !o.no_reference);
  progress.done();
  const auto& s = r.result.stats;
  const bool rtl = opt.backend == run::Backend::rtl;
  if (!o.records_path.empty() && rtl) cli::write_records(o.records_path, r);
  if (!o.out_path.empty()) {
    const std::string& first = r.kernel->outputs.at(0).name;
    sim::npy_save(o.out_path, sim::array_to_npy(r.result.outputs.at(first)));
  }
  cli::print_report(std::cout, o, r);
  if (!o.profile_name.empty()) {
    sim::ProfileRun pr;
    pr.prog = &r.program;
    pr.preset = preset;
    pr.rtl = rtl ? &s : nullptr;
    pr.title = fmt::format("{} {} dtype={}", r.kernel->name, r.values.text(), o.dtype);
    std::cout << sim::write_profile(o.profile_name, pr);
  }
  if (!o.json_path.empty()) cli::write_json(o.json_path, o, r);
  return r.correct ? kOk : kWrong;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  cli::Options o;
  if (const int rc = cli::parse(argc, argv, o); rc >= 0) return rc;
  try {
    return run_cli(o);
  } catch (const KernelError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kBadInput;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kBadInput;
  } catch (const ImageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kBadInput;
  } catch (const Interrupted&) {
    std::cerr << "\nncore-sim: interrupted (Ctrl-C); no output written\n";
    return kInterrupted;
  } catch (const SimError& e) {
    std::cerr << "simulation error: " << e.what() << "\n";
    return kSimError;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: the host ran out of memory (the kernel's tensors or a run larger than this machine "
                 "holds)\n";
    return kSimError;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kSimError;
  }
}

// SystemC's banner is printed when its kernel starts; keep the tool's output to the report.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
