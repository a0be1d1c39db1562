// What ncore-sim prints and writes after a run: the report (as run_benchmark.py prints it on the
// chip: correctness, latency, DMA transfers, then the model's own figures), the JSON of the same
// figures, and the per-instruction records as CSV.
#pragma once

#include <iosfwd>
#include <string>

#include "cli/options.hpp"
#include "run/pipeline.hpp"

namespace ncore::cli {

// "kernel stream n=25600 free_dim=200 dtype=fp32 config=trn2 backend=rtl", "Correctness passed? True", ...
void print_report(std::ostream& out, const Options& o, const run::KernelRun& r);
// The same figures as JSON (`kernel`, the parameters, `correct`, `cycles`, `time_us`, ...).
void write_json(const std::string& path, const Options& o, const run::KernelRun& r);
// Every instruction's ready, issue, start and end cycles (RTL runs).
void write_records(const std::string& path, const run::KernelRun& r);

}  // namespace ncore::cli
