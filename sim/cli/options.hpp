// ncore-sim's command line. The kernel options come from the kernels' declarations
// (kernels/include/kernels/kernel.hpp): one option per parameter flag (kernels that share a
// flag, such as -n, share the option, each adding its line to the help), one per input file
// flag (--a, --x, ...). The rest are the simulator's own: dtype, configuration, backend, check
// mode, files written, waveforms.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ncore::cli {

struct Options {
  std::string kernel;
  std::map<std::string, int64_t> params;     // the kernel's parameters given, by name
  std::map<std::string, std::string> files;  // the kernel's inputs given as .npy files, by input name
  std::map<std::string, std::string> file_given;  // how each was given ("--a a.npy"), for messages
  std::string dtype = "fp32";
  std::string config = "trn2";
  std::string backend = "rtl";
  std::string threads = "auto";  // RTL model threads: auto, 1 or 2
  std::string pe_model;          // the RTL models' PE array: rtl or fast (empty: $NCORE_PE_MODEL, else rtl)
  unsigned dma_queues = 4;
  uint64_t seed = 0;
  bool check = false;
  bool no_skip = false;
  bool quiet = false;
  bool no_reference = false;  // skip the built-in reference (the caller checks --out itself)
  std::string json_path, out_path, listing_path, image_out, image_in, records_path;
  std::string profile_name;  // --profile NAME: NAME.summary.json, NAME.trace.json, NAME.timeline.html
  std::string waves, waves_window;
  std::vector<std::string> waves_scopes;
  std::string print;  // --print example|waves: the kernel's declared field, and exit
  std::vector<std::string> sets;  // --set NAME=VALUE: what-if values of the preset (ncore/preset_values.hpp)
};

// Parses argv. Returns the exit status when the program should stop here (--help, --version,
// --print, a parse error: 0 or 2), or -1 to go on and run. `--example` is replaced by the
// kernel's declared example arguments before parsing.
int parse(int argc, char* argv[], Options& out);

}  // namespace ncore::cli
