// The failure reporter of the RTL's assertions (ncore_assert.svh), declared once for every module:
// the DPI-C import that a failing assertion's action block calls with "<instance>.<assertion>:
// <message>". Its C++ side, sim/trace/rtl_assert.cpp, records the message, and whoever clocks the
// model stops the run with the cycle and the message. Simulation only: without NCORE_ASSERT (a
// synthesis flow, the default full cores) the package is empty.
package ncore_assert_pkg;
`ifdef NCORE_ASSERT
  import "DPI-C" function void ncore_assert_fail(input string msg);
`endif
endpackage
