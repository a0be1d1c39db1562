// Assertion macros of the RTL, after lowRISC's prim_assert.sv: every module states the protocol
// rules and invariants of its own logic with these, next to the logic they guard, and each one
// fires in every simulation built with the assertions (NCORE_ASSERT: Verilator --assert
// +define+NCORE_ASSERT, rtl/CMakeLists.txt; the unit benches always, the full cores with
// -DNCORE_ASSERT=ON). Without NCORE_ASSERT (a synthesis flow, the default full cores) they expand
// to nothing, and so does the checking logic that some of them need, which sits in
// `ifdef NCORE_ASSERT blocks beside them.
//
// A failure calls the one DPI-C import of the failure reporter, ncore_assert_pkg::ncore_assert_fail,
// with "<instance>.<name>: <msg>" (%m names the instance and the assertion); sim/trace/rtl_assert.hpp
// records it and whoever clocks the model stops the run with the cycle and that message.
//
//   `ASSERT(name, prop, msg)           prop holds at every rising clock edge out of reset
//   `ASSERT_IF(name, prop, en, msg)    prop holds at every edge where en holds
//   `ASSERT_NEVER(name, prop, msg)     prop never holds
//   `ASSERT_KNOWN(name, sig)           sig has no X or Z bit (a check for four-state simulators:
//                                      it always holds in the two states of a Verilated model)
//   `ASSERT_WIDE(name, prop, msg)      as ASSERT, sampled by an immediate assertion at the edge:
//                                      for a property or a message reading a signal wider than
//                                      64 bits, which a concurrent assertion of Verilator 5.006
//                                      cannot sample (its generated C++ does not compile)
//
// And one for the functional cover points (coverage builds: NCORE_COVER, Verilator
// --coverage-user), written in a clocked block's cover list:
//
//   `COVER_DTYPES(name, cond, dt)      three bins, name_fp32, name_bf16 and name_fp16: cond with dt
//                                      (an ncore_isa_pkg::dtype_e) each of the float dtypes
//
// msg is a string (a $sformatf(...) for values). Each takes the clock and the active-low reset
// as two optional last arguments, clk_i and rst_ni by default; `disable iff` reads the reset
// at the clock while the flops reset asynchronously on it (rtl/lint.vlt's SYNCASYNCNET waiver).
`ifndef NCORE_ASSERT_SVH
`define NCORE_ASSERT_SVH

`ifdef NCORE_ASSERT

`define ASSERT(__name, __prop, __msg, __clk = clk_i, __rst_n = rst_ni) \
  __name: assert property (@(posedge __clk) disable iff (!(__rst_n)) (__prop)) \
    else ncore_assert_pkg::ncore_assert_fail($sformatf("%m: %s", __msg));

`define ASSERT_IF(__name, __prop, __en, __msg, __clk = clk_i, __rst_n = rst_ni) \
  `ASSERT(__name, (__en) |-> (__prop), __msg, __clk, __rst_n)

`define ASSERT_NEVER(__name, __prop, __msg, __clk = clk_i, __rst_n = rst_ni) \
  `ASSERT(__name, !(__prop), __msg, __clk, __rst_n)

`define ASSERT_KNOWN(__name, __sig, __clk = clk_i, __rst_n = rst_ni) \
  `ASSERT(__name, !$isunknown(__sig), $sformatf("%s has an unknown bit", `"__sig`"), __clk, __rst_n)

`define ASSERT_WIDE(__name, __prop, __msg, __clk = clk_i, __rst_n = rst_ni) \
  always_ff @(posedge __clk) begin \
    if (__rst_n) begin \
      __name: assert (__prop) else ncore_assert_pkg::ncore_assert_fail($sformatf("%m: %s", __msg)); \
    end \
  end

`else

`define ASSERT(__name, __prop, __msg, __clk = clk_i, __rst_n = rst_ni)
`define ASSERT_IF(__name, __prop, __en, __msg, __clk = clk_i, __rst_n = rst_ni)
`define ASSERT_NEVER(__name, __prop, __msg, __clk = clk_i, __rst_n = rst_ni)
`define ASSERT_KNOWN(__name, __sig, __clk = clk_i, __rst_n = rst_ni)
`define ASSERT_WIDE(__name, __prop, __msg, __clk = clk_i, __rst_n = rst_ni)

`endif

`define COVER_DTYPES(__name, __cond, __dt) \
  __name``_fp32: cover ((__cond) && (__dt) == ncore_isa_pkg::DT_FP32); \
  __name``_bf16: cover ((__cond) && (__dt) == ncore_isa_pkg::DT_BF16); \
  __name``_fp16: cover ((__cond) && (__dt) == ncore_isa_pkg::DT_FP16);

`endif
