// The C++ side of the RTL's assertions (models Verilated with --assert and +define+NCORE_ASSERT:
// the unit benches' always, the full cores with -DNCORE_ASSERT=ON; see rtl/CMakeLists.txt). A failing assertion's action block calls the
// DPI-C import
//     ncore_assert_fail($sformatf("%m: what broke, with the values"));
// which records the message here (%m names the instance and the assertion). Whoever clocks the
// model asks after every edge whether one failed and stops the run with the cycle: the SystemC
// top level throws a SimError (ncore-sim exits with status 3), the unit benches (bench_dut.hpp)
// a std::runtime_error. Verilator's own $stop/$error (an assertion without an action block, a
// `unique case` with no match) are caught through the context's error flag (fatalOnError off).
#pragma once

#include <cstdint>
#include <string>

namespace ncore::rtl {

// Whether the RTL reported an assertion failure since the last take (an atomic read: cheap
// enough for every clock edge).
bool assertion_failed();

// The failures reported since the last take, one per line, oldest first (at most the first 16,
// then a count of the rest); clears them.
std::string take_assertion_failures();

// "assertion failed at cycle N: <messages>", the message every driver of a model reports.
std::string assertion_report(uint64_t cycle);

// Whether Verilator stopped the RTL ($stop, $error, $fatal: its message is on stdout) since the
// last call; clears the flag. keep_running_on_error() makes such a stop set the flag rather
// than abort the process (the default context's fatalOnError off).
bool rtl_stopped();
void keep_running_on_error();

// Coverage builds (NCORE_COVERAGE): writes the default context's coverage counts, at the
// process's exit, to $NCORE_COVERAGE_DIR/cov-<pid>.dat (the current directory without it).
// Nothing in other builds. Call once the models exist (the handler must run before they are
// destroyed: at exit, handlers and static objects go in the reverse order of their registration).
void write_coverage_at_exit();

}  // namespace ncore::rtl
