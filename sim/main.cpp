// ncore-sim: runs a kernel on the Verilated NeuronCore (or on the golden model alone) and
// reports what run_benchmark.py reports on the real chip: whether the result is right, the
// latency, and the DMA transfer count.
//
//   ncore-sim --kernel stream -n 25600 --free-dim 200 [--check] [--json out.json]
//
// Exit status: 0 result correct, 1 result wrong, 2 bad input (arguments, files, a kernel
// that breaks a hardware rule), 3 simulation error (golden-model mismatch, deadlock, stall).
#include <systemc.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core_sim.hpp"
#include "golden_model.hpp"
#include "ncore/error.hpp"
#include "ncore/presets_gen.hpp"
#include "ncore/program.hpp"
#include "nki/registry.hpp"
#include "npy.hpp"
#include "numerics.hpp"
#include "profile.hpp"

using namespace ncore;

namespace {

enum Exit { kOk = 0, kWrong = 1, kBadInput = 2, kSimError = 3 };

struct Cli {
  kernels::Args args;
  std::string dtype = "fp32";
  std::string config = "trn2";
  std::string backend = "rtl";
  std::string threads = "auto";  // RTL model threads: auto, 1 or 2
  uint64_t seed = 0;
  bool check = false;
  bool no_skip = false;
  bool quiet = false;
  bool no_reference = false;  // skip the built-in reference (the caller checks --out itself)
  std::string json_path, out_path, listing_path, image_out, image_in, records_path;
  std::string profile_name;  // --profile NAME: NAME.summary.json, NAME.trace.json, NAME.timeline.html
  std::string waves, waves_window;
  std::vector<std::string> waves_scopes;
  std::vector<std::string> input_files;  // NAME=FILE.npy
  std::string a_file, b_file;
  std::string x_file, w_file, bias_file;  // conv
};

std::vector<uint8_t> to_dtype_bytes(const sim::NpyArray& a, isa::Dtype dt, const std::string& what) {
  const uint64_t n = a.elements();
  const unsigned esz = isa::dtype_bytes(dt);
  std::vector<uint8_t> out(n * esz);
  auto put = [&](uint64_t i, uint32_t bits) { std::memcpy(out.data() + i * esz, &bits, esz); };
  if (a.descr == "<f4") {
    for (uint64_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, a.data.data() + 4 * i, 4);
      put(i, num::from_float(f, dt));
    }
  } else if (a.descr == "<f2") {
    if (dt == isa::Dtype::bf16) throw InputError(what + ": float16 data given for a bfloat16 kernel (use float32 or '<u2' bfloat16 bits)");
    for (uint64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, a.data.data() + 2 * i, 2);
      put(i, dt == isa::Dtype::fp16 ? h : num::from_f32_bits(num::to_f32_bits(h, isa::Dtype::fp16), dt));
    }
  } else {  // <u2: bfloat16 bit patterns
    if (dt != isa::Dtype::bf16) throw InputError(what + ": '<u2' data (bfloat16 bits) given for a " + std::string(isa::to_string(dt)) + " kernel");
    out = a.data;
  }
  return out;
}

sim::NpyArray from_dtype_bytes(const std::vector<uint8_t>& b, isa::Dtype dt, const std::vector<int64_t>& shape) {
  sim::NpyArray a;
  a.shape = shape;
  if (dt == isa::Dtype::fp16) {
    a.descr = "<f2";
    a.data = b;
  } else {
    // fp32 as is; bfloat16 widened exactly to float32 (NumPy has no bfloat16).
    a.descr = "<f4";
    const unsigned esz = isa::dtype_bytes(dt);
    const uint64_t n = b.size() / esz;
    a.data.resize(4 * n);
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t bits = 0;
      std::memcpy(&bits, b.data() + i * esz, esz);
      const uint32_t f = num::to_f32_bits(bits, dt);
      std::memcpy(a.data.data() + 4 * i, &f, 4);
    }
  }
  return a;
}

// allclose in the sense of numpy, with tolerances that suit the dtype.
struct Compare {
  bool exact = true, close = true;
  uint64_t mismatches = 0, first = 0;
  double max_abs_err = 0;
};

// `exact` kernels compute what the reference computes and round once; the others (matmul)
// sum in another order and precision, so they get room for that too.
Compare compare(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, isa::Dtype dt, bool exact) {
  Compare c;
  const unsigned esz = isa::dtype_bytes(dt);
  const double rtol = (dt == isa::Dtype::fp32 ? 1e-5 : dt == isa::Dtype::fp16 ? 1e-3 : 1e-2) * (exact ? 1 : 10);
  const double atol = 1e-8;
  const uint64_t n = want.size() / esz;
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t g = 0, w = 0;
    std::memcpy(&g, got.data() + i * esz, esz);
    std::memcpy(&w, want.data() + i * esz, esz);
    if (g == w) continue;
    c.exact = false;
    const double gv = num::to_float(g, dt), wv = num::to_float(w, dt);
    const double err = std::fabs(gv - wv);
    if (!(err <= atol + rtol * std::fabs(wv)) && !(std::isnan(gv) && std::isnan(wv))) {
      if (c.mismatches++ == 0) c.first = i;
      c.close = false;
    }
    if (err > c.max_abs_err || std::isnan(err)) c.max_abs_err = err;
  }
  return c;
}

int run(const Cli& cli) {
  const Preset* preset = find_preset(cli.config);
  if (!preset || std::string(preset->name) == "tiny")
    throw InputError(fmt::format("--config {}: unknown configuration (choose trn2 or trn1)", cli.config));
  kernels::Args args = cli.args;
  if (!isa::from_string(cli.dtype, args.dtype))
    throw InputError(fmt::format("--dtype {}: unknown dtype (choose fp32, bf16 or fp16)", cli.dtype));

  // Inputs given as files fix n when it was not given.
  std::map<std::string, std::string> files;
  for (const auto& f : cli.input_files) {
    const auto eq = f.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == f.size())
      throw InputError(fmt::format("--input {}: expected NAME=FILE.npy", f));
    files[f.substr(0, eq)] = f.substr(eq + 1);
  }
  if (!cli.a_file.empty()) files["a_vec"] = cli.a_file;
  if (!cli.b_file.empty()) files["b_vec"] = cli.b_file;
  std::map<std::string, sim::NpyArray> arrays;
  for (const auto& [name, path] : files) arrays[name] = sim::npy_load(path);
  const kernels::KernelInfo& kinfo = kernels::info(args.kernel);
  if (!kinfo.conv && !(cli.x_file.empty() && cli.w_file.empty() && cli.bias_file.empty()))
    throw InputError(fmt::format("--x, --w and --bias are inputs of the conv kernel, not of {}", args.kernel));
  if (!cli.x_file.empty()) arrays["X"] = sim::npy_load(files["X"] = cli.x_file);
  if (!cli.w_file.empty()) arrays["W"] = sim::npy_load(files["W"] = cli.w_file);
  if (!cli.bias_file.empty()) arrays["bias"] = sim::npy_load(files["bias"] = cli.bias_file);
  // A vector kernel's length may come from its input files.
  if (kinfo.sizes.size() == 1 && kinfo.sizes[0].flag == 'n' && args.n == 0 && !arrays.empty())
    args.n = static_cast<int64_t>(arrays.begin()->second.elements());
  // The conv kernel's sizes come from its input files when they are given.
  if (kinfo.conv) {
    auto dims = [&](const char* name, size_t nd, const char* what) -> const std::vector<int64_t>* {
      auto it = arrays.find(name);
      if (it == arrays.end()) return nullptr;
      if (it->second.shape.size() != nd)
        throw InputError(fmt::format("{}: {} must have {} dimensions ({}), got shape ({})", files[name], name, nd, what,
                                     fmt::join(it->second.shape, ", ")));
      return &it->second.shape;
    };
    if (const auto* x = dims("X", 4, "batch, in channels, height, width")) {
      args.batch = (*x)[0];
      args.in_channels = (*x)[1];
      args.height = (*x)[2];
      args.width = (*x)[3];
    }
    if (const auto* w = dims("W", 4, "out channels, in channels, filter height, filter width")) {
      if (arrays.count("X") && (*w)[1] != args.in_channels)
        throw InputError(fmt::format("{}: W has {} input channels but X has {}", files["W"], (*w)[1], args.in_channels));
      if ((*w)[2] != (*w)[3])
        throw InputError(fmt::format("{}: the filter must be square (Filter Height == Filter Width), got {} x {}",
                                     files["W"], (*w)[2], (*w)[3]));
      args.out_channels = (*w)[0];
      args.in_channels = (*w)[1];
      args.filter = (*w)[2];
    }
    if (const auto* b = dims("bias", 1, "out channels"))
      if ((*b)[0] != args.out_channels)
        throw InputError(fmt::format("{}: bias has {} elements but there are {} output channels", files["bias"], (*b)[0],
                                     args.out_channels));
  }
  kernels::check_args(args);

  // Trace the kernel (or load an image) into a Program.
  Program prog;
  if (!cli.image_in.empty()) {
    prog = Program::load(cli.image_in);
    const std::string want = kernels::build(args, *preset).kernel;  // the kernel's function name
    if (prog.kernel != want)
      throw InputError(fmt::format("--image {} holds kernel '{}', not --kernel {} ({})", cli.image_in, prog.kernel,
                                   args.kernel, want));
    if (prog.preset != preset->name)
      throw InputError(fmt::format("--image {} was traced for '{}', not --config {}", cli.image_in, prog.preset, preset->name));
  } else {
    prog = kernels::build(args, *preset);
  }
  if (!cli.listing_path.empty()) {
    std::ofstream out(cli.listing_path);
    if (!out) throw InputError(fmt::format("--listing {}: cannot open for writing", cli.listing_path));
    out << prog.listing();
  }
  if (!cli.image_out.empty()) prog.save(cli.image_out);

  // HBM: the Program's constants, and inputs from files or random, uniform in [0, 1) as
  // NumPy's rand.
  std::vector<uint8_t> hbm(prog.hbm_bytes, 0);
  prog.load_constants(hbm.data(), hbm.size());
  std::map<std::string, std::vector<uint8_t>> inputs;
  std::mt19937_64 rng(cli.seed);
  std::uniform_real_distribution<float> uni(0.0f, 1.0f);
  for (const auto& spec : kernels::inputs(args)) {
    std::vector<uint8_t> bytes;
    const uint64_t n = spec.bytes() / isa::dtype_bytes(spec.dtype);
    if (auto it = arrays.find(spec.name); it != arrays.end()) {
      if (it->second.elements() != n)
        throw InputError(fmt::format("{}: has {} elements, the kernel's input '{}' needs {}", files[spec.name],
                                     it->second.elements(), spec.name, n));
      bytes = to_dtype_bytes(it->second, spec.dtype, files[spec.name]);
      arrays.erase(it);
    } else {
      bytes.resize(spec.bytes());
      for (uint64_t i = 0; i < n && !spec.zeros; ++i) {
        const uint32_t v = num::from_float(uni(rng), spec.dtype);
        std::memcpy(bytes.data() + i * isa::dtype_bytes(spec.dtype), &v, isa::dtype_bytes(spec.dtype));
      }
    }
    const HbmTensor* t = prog.find_tensor(spec.name);
    if (!t || t->bytes != bytes.size())
      throw InputError(fmt::format("the program has no HBM input '{}' of {} bytes", spec.name, bytes.size()));
    std::memcpy(hbm.data() + t->offset, bytes.data(), bytes.size());
    inputs[spec.name] = std::move(bytes);
  }
  if (!arrays.empty()) throw InputError(fmt::format("--input {}: the kernel has no input of that name", arrays.begin()->first));

  // Run.
  sim::RunResult r;
  unsigned rtl_threads = 0;
  if (cli.backend == "rtl") {
    sim::RunOptions opt;
    opt.check = cli.check;
    opt.skip_idle = !cli.no_skip;
    opt.waves = cli.waves;
    opt.waves_scopes = cli.waves_scopes;
    if (!cli.waves_window.empty()) {
      const auto colon = cli.waves_window.find(':');
      try {
        if (colon == std::string::npos) throw std::invalid_argument("no colon");
        size_t used = 0;
        if (colon > 0) {
          opt.waves_start = std::stoull(cli.waves_window.substr(0, colon), &used);
          if (used != colon) throw std::invalid_argument("start");
        }
        if (colon + 1 < cli.waves_window.size()) {
          opt.waves_end = std::stoull(cli.waves_window.substr(colon + 1), &used);
          if (used != cli.waves_window.size() - colon - 1) throw std::invalid_argument("end");
        }
      } catch (const std::exception&) {
        throw InputError(fmt::format("--waves-window {}: expected START:END in cycles (either may be empty)",
                                     cli.waves_window));
      }
      if (opt.waves_start >= opt.waves_end)
        throw InputError(fmt::format("--waves-window {}: START must be below END", cli.waves_window));
    }
    if (opt.waves.empty() && (!cli.waves_scopes.empty() || !cli.waves_window.empty()))
      throw InputError("--waves-scope and --waves-window need --waves FILE.fst");
    for (const auto& name : cli.waves_scopes) {
      std::string known;
      bool found = false;
      for (const auto& w : sim::kWaveScopes) {
        known += std::string(known.empty() ? "" : ", ") + w.name;
        found |= name == w.name;
      }
      if (!found) throw InputError(fmt::format("--waves-scope {}: unknown scope (known: {})", name, known));
    }
    if (!cli.quiet && isatty(STDERR_FILENO)) {
      opt.progress_seconds = 2.0;
      opt.progress = [&](uint64_t cyc, uint64_t done, uint64_t total) {
        std::fprintf(stderr, "\r[ncore-sim] cycle %llu (%.1f us), %llu of %llu instructions done ",
                     static_cast<unsigned long long>(cyc), static_cast<double>(cyc) / preset->clock_mhz,
                     static_cast<unsigned long long>(done), static_cast<unsigned long long>(total));
        std::fflush(stderr);
      };
    }
    unsigned threads = 0;
    if (cli.threads == "auto") {
      threads = sim::Core::auto_threads(*preset, prog);
    } else {
      const auto counts = sim::Core::thread_counts(preset->name);
      for (unsigned t : counts)
        if (cli.threads == std::to_string(t)) threads = t;
      if (threads == 0)
        throw InputError(fmt::format("--threads {}: the {} model runs on {} thread{} (or auto)", cli.threads,
                                     preset->name, fmt::join(counts, " or "), counts.size() == 1 ? "" : "s"));
    }
    r = sim::Core::get(*preset, threads).run(prog, hbm, opt);
    rtl_threads = threads;
    if (opt.progress_seconds > 0 && r.wall_seconds >= opt.progress_seconds) std::fprintf(stderr, "\n");
  } else if (cli.backend == "golden") {
    GoldenModel g(*preset, prog.hbm_bytes);
    std::memcpy(g.hbm(), hbm.data(), hbm.size());
    const auto st = g.run(prog);
    std::memcpy(hbm.data(), g.hbm(), hbm.size());
    r.instructions = st.instructions;
    r.dma_transfers = st.dma_transfers;
  } else {
    throw InputError(fmt::format("--backend {}: choose rtl or golden", cli.backend));
  }

  if (!cli.records_path.empty() && cli.backend == "rtl") {
    std::ofstream out(cli.records_path);
    if (!out) throw InputError(fmt::format("--records {}: cannot open for writing", cli.records_path));
    out << "stream,index,opcode,ready,issue,start,end,source\n";
    for (const auto& rec : r.records) {
      const auto& in = prog.streams[rec.stream].insns[rec.index];
      const auto& loc = prog.locations.at(in.loc);
      out << fmt::format("{},{},{},{},{},{},{},{}:{}\n", prog.streams[rec.stream].name, rec.index,
                         isa::to_string(in.insn.opcode), rec.ready, rec.issue, rec.start, rec.end, loc.file, loc.line);
    }
  }

  // Result and report.
  const kernels::TensorSpec outspec = kernels::output(args);
  const HbmTensor* ot = prog.find_tensor(outspec.name);
  if (!ot) throw SimError("the program has no output tensor 'out'");
  const std::vector<uint8_t> got(hbm.begin() + static_cast<long>(ot->offset),
                                 hbm.begin() + static_cast<long>(ot->offset + ot->bytes));
  const std::vector<uint8_t> want = cli.no_reference ? std::vector<uint8_t>{} : kernels::reference(args, inputs);
  const Compare c = cli.no_reference ? Compare{} : compare(got, want, args.dtype, kinfo.exact);
  if (!cli.out_path.empty()) sim::npy_save(cli.out_path, from_dtype_bytes(got, args.dtype, outspec.shape));

  const bool rtl = cli.backend == "rtl";
  std::cout << fmt::format("kernel {} {} dtype={} config={} backend={}\n", args.kernel, kernels::args_text(args),
                           cli.dtype, preset->name, cli.backend);
  if (cli.no_reference)
    std::cout << "Correctness passed? not checked (--no-reference)\n";
  else
    std::cout << "Correctness passed? " << (c.close ? "True" : "False") << "\n";
  if (!c.close)
    std::cout << fmt::format("  {} of {} elements differ from the reference (first at index {}, max abs error {:g})\n",
                             c.mismatches, want.size() / isa::dtype_bytes(args.dtype), c.first, c.max_abs_err);
  if (rtl) {
    std::cout << fmt::format("Latency: {} cycles = {:.3f} us at {} MHz\n", r.cycles, r.time_us, preset->clock_mhz);
  }
  std::cout << "dma_transfer_count: " << r.dma_transfers << "\n";
  std::cout << "instructions: " << r.instructions;
  if (cli.check && rtl) std::cout << " (" << r.checked_instructions << " checked against the golden model)";
  std::cout << "\n";
  const uint64_t pe_count = uint64_t{preset->num_partitions} * preset->num_partitions;
  const double te_util = r.cycles ? 100.0 * static_cast<double>(r.te_macs) / static_cast<double>(pe_count * r.cycles) : 0.0;
  if (rtl && r.te_macs > 0)
    std::cout << fmt::format("Tensor engine: {} MACs, {:.1f}% of the array's peak over the run\n", r.te_macs, te_util);
  if (rtl)
    std::cout << fmt::format("simulated in {:.2f} s ({} cycles clocked, {} idle cycles skipped, {} thread{})\n",
                             r.wall_seconds, r.evaluated_cycles, r.skipped_cycles, rtl_threads,
                             rtl_threads == 1 ? "" : "s");

  if (!cli.profile_name.empty()) {
    sim::ProfileRun pr;
    pr.prog = &prog;
    pr.preset = preset;
    pr.rtl = rtl ? &r : nullptr;
    pr.title = fmt::format("{} {} dtype={}", args.kernel, kernels::args_text(args), cli.dtype);
    std::cout << sim::write_profile(cli.profile_name, pr);
  }

  if (!cli.json_path.empty()) {
    nlohmann::ordered_json j;
    j["kernel"] = args.kernel;
    for (const auto& [name, value] : kernels::arg_values(args)) j[name] = value;
    j["dtype"] = cli.dtype;
    j["config"] = preset->name;
    j["backend"] = cli.backend;
    if (cli.no_reference) {
      j["correct"] = nullptr;
      j["bit_exact"] = nullptr;
    } else {
      j["correct"] = c.close;
      j["bit_exact"] = c.exact;
    }
    if (rtl) {
      j["cycles"] = r.cycles;
      j["time_us"] = r.time_us;
      j["clock_mhz"] = preset->clock_mhz;
    } else {
      j["cycles"] = nullptr;
      j["time_us"] = nullptr;
    }
    j["dma_transfer_count"] = r.dma_transfers;
    j["instructions"] = r.instructions;
    j["checked_instructions"] = r.checked_instructions;
    j["hbm_read_bytes"] = r.hbm_read_bytes;
    j["hbm_write_bytes"] = r.hbm_write_bytes;
    if (rtl) {
      j["te_macs"] = r.te_macs;
      j["te_utilization_percent"] = te_util;
      j["te_array_busy_cycles"] = r.te_array_busy_cycles;
    }
    j["evaluated_cycles"] = r.evaluated_cycles;
    j["skipped_cycles"] = r.skipped_cycles;
    j["wall_seconds"] = r.wall_seconds;
    if (rtl) j["rtl_threads"] = rtl_threads;
    std::ofstream out(cli.json_path);
    if (!out) throw InputError(fmt::format("--json {}: cannot open for writing", cli.json_path));
    out << j.dump(2) << "\n";
  }
  return c.close ? kOk : kWrong;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  Cli cli;
  CLI::App app{"ncore-sim: run an NKI-style kernel cycle by cycle on the NeuronCore RTL model"};
  app.set_version_flag("--version", "ncore-sim 0.1");
  std::vector<std::string> names;
  std::string kernel_help = "kernel to run:";
  for (const auto& k : kernels::list()) {
    names.push_back(k.name);
    kernel_help += "\n  " + k.name + ": " + k.doc;
  }
  app.add_option("--kernel", cli.args.kernel, kernel_help)->required()->check(CLI::IsMember(names));
  for (const char flag : {'n', 'm', 'k'}) {
    std::string help;
    for (const auto& k : kernels::list())
      for (const auto& sz : k.sizes)
        if (sz.flag == flag) help += fmt::format("{}{}: {}", help.empty() ? "" : "; ", k.name, sz.help);
    int64_t* field = flag == 'n' ? &cli.args.n : flag == 'm' ? &cli.args.m : &cli.args.k;
    app.add_option(std::string("-") + flag, *field, help)->check(CLI::PositiveNumber);
  }
  app.add_option("--batch", cli.args.batch, "conv: images in X (default 4)")->check(CLI::PositiveNumber);
  app.add_option("--in-channels", cli.args.in_channels, "conv: input channels, a multiple of 128 (default 128)")
      ->check(CLI::PositiveNumber);
  app.add_option("--out-channels", cli.args.out_channels, "conv: output channels, a multiple of 128 (default 128)")
      ->check(CLI::PositiveNumber);
  app.add_option("--height", cli.args.height, "conv: image height (default 32)")->check(CLI::PositiveNumber);
  app.add_option("--width", cli.args.width, "conv: image width (default 16)")->check(CLI::PositiveNumber);
  app.add_option("--filter", cli.args.filter, "conv: filter height and width (default 3)")->check(CLI::PositiveNumber);
  app.add_option("--pool-size", cli.args.pool_size, "conv: max-pool window and stride; 1 is no pooling (default 1)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-bias", [&](int64_t) { cli.args.bias = false; }, "conv: a bias of zeros instead of random");
  app.add_option("--x", cli.x_file, "conv: input X [batch, in channels, height, width] from a .npy file");
  app.add_option("--w", cli.w_file, "conv: weights W [out channels, in channels, filter, filter] from a .npy file");
  app.add_option("--bias", cli.bias_file, "conv: bias [out channels] from a .npy file");
  app.add_option("--row-chunk", cli.args.row_chunk, "tiled: ROW_CHUNK, rows per tile (default 128)");
  app.add_option("--free-dim", cli.args.free_dim, "stream: FREE_DIM, elements per partition per tile (default 200)");
  app.add_option("--dtype", cli.dtype, "element type: fp32, bf16 or fp16 (default fp32)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--config", cli.config, "hardware configuration: trn2 (default) or trn1")
      ->check(CLI::IsMember({"trn2", "trn1"}));
  app.add_option("--seed", cli.seed, "seed of the random inputs (default 0)");
  app.add_option("--dma-queues", cli.args.dma_queues, "DMA queues the kernel's transfers are spread over (default 4)")
      ->check(CLI::Range(1, 16));
  app.add_option("--threads", cli.threads,
                 "threads the RTL model runs on: 1, 2 (trn2) or auto (default: 2 when the kernel uses the tensor "
                 "engine and the machine has two cores, else 1)");
  app.add_flag("--check", cli.check, "compare every instruction's result with the golden model as it completes");
  app.add_option("--backend", cli.backend, "rtl (default): cycle-level RTL; golden: functional model only, no timing")
      ->check(CLI::IsMember({"rtl", "golden"}));
  app.add_option("--a", cli.a_file, "vector add: input a_vec from a .npy file (float32; float16 for fp16; '<u2' bits or float32 for bf16)");
  app.add_option("--b", cli.b_file, "vector add: input b_vec from a .npy file");
  app.add_option("--input", cli.input_files,
                 "input NAME=FILE.npy (repeatable): a_vec, b_vec (vector add), a_tensor (transpose), lhsT, rhs (matmul), X, W, "
                 "bias (conv)");
  app.add_option("--out", cli.out_path, "write the output to FILE.npy (bf16 output is written as float32)");
  app.add_option("--json", cli.json_path, "write the figures as JSON to FILE");
  app.add_option("--listing", cli.listing_path, "write the Program's readable listing to FILE");
  app.add_option("--save-image", cli.image_out, "write the Program's binary image to FILE");
  app.add_option("--image", cli.image_in, "run this Program image instead of tracing the kernel");
  app.add_option("--profile", cli.profile_name,
                 "profile the run: write NAME.summary.json (neuron-profile's metrics), NAME.trace.json (Chrome/Perfetto "
                 "trace events) and NAME.timeline.html (a self-contained timeline page), and print the summary; the "
                 "golden backend writes the counts only");
  app.add_option("--records", cli.records_path,
                 "write each instruction's timing as CSV: when its sequencer reached it, issued it (wait satisfied), "
                 "the engine started it, and it completed (cycles)");
  std::string scope_help = "limit the dump to these scopes (comma-separated):";
  for (const auto& w : sim::kWaveScopes) scope_help += std::string("\n  ") + w.name + ": " + w.doc;
  app.add_option("--waves", cli.waves, "dump the RTL's signals to FILE.fst (FST, for GTKWave; waves/ has save files)");
  app.add_option("--waves-scope", cli.waves_scopes, scope_help)->delimiter(',');
  app.add_option("--waves-window", cli.waves_window, "dump only cycles START:END (either may be empty)");
  app.add_flag("--no-skip", cli.no_skip, "clock every cycle, also idle ones (same cycle count, slower)");
  app.add_flag("-q,--quiet", cli.quiet, "no progress line on long runs");
  app.add_flag("--no-reference", cli.no_reference,
               "do not compare with the built-in C++ reference (for callers that check the --out file themselves)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kOk : kBadInput;
  }
  try {
    return run(cli);
  } catch (const KernelError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kBadInput;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kBadInput;
  } catch (const ImageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kBadInput;
  } catch (const SimError& e) {
    std::cerr << "simulation error: " << e.what() << "\n";
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
