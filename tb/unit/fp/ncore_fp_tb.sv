// Test-bench wrapper of the FP package (rtl/ncore_fp_pkg.sv) for the Catch2 bench next to it:
// every function on ports, purely combinational, so that one eval() computes all of them for one
// operand pair. The bench drives a_i/b_i/raw_i from C++ and compares each output with
// firmware/include/ncore/numerics.hpp.
module ncore_fp_tb
  import ncore_isa_pkg::*;
  import ncore_fp_pkg::*;
(
  input  alu_op_e     op_i,        // operation of alu_o
  input  act_func_e   fn_i,        // activation function of act_o
  input  dtype_e      dt_i,        // dtype of to_f32_o and from_f32_o
  input  logic [31:0] a_i,         // fp32 operand a (and the fp32 input of from_f32_o)
  input  logic [31:0] b_i,         // fp32 operand b
  input  logic [31:0] raw_i,       // element bits (LSBs) for to_f32_o
  output logic [31:0] alu_o,       // fp_alu(op_i, a_i, b_i)
  output logic [31:0] add_o,       // f32_add(a_i, b_i)
  output logic [31:0] sub_o,       // fp_alu(ALU_SUBTRACT, a_i, b_i)
  output logic [31:0] mul_o,       // f32_mul(a_i, b_i)
  output logic [31:0] max_o,       // f32_max(a_i, b_i)
  output logic [31:0] min_o,       // f32_min(a_i, b_i)
  output logic [31:0] to_f32_o,    // fp_to_f32(raw_i, dt_i)
  output logic [31:0] from_f32_o,  // fp_from_f32(a_i, dt_i)
  output logic [31:0] div_o,       // f32_div(a_i, b_i)
  output logic [31:0] sqrt_o,      // f32_sqrt(a_i)
  output logic [31:0] act_o        // fp_act(fn_i, a_i)
);

  assign alu_o = fp_alu(op_i, a_i, b_i);
  assign add_o = f32_add(a_i, b_i);
  assign sub_o = fp_alu(ALU_SUBTRACT, a_i, b_i);
  assign mul_o = f32_mul(a_i, b_i);
  assign max_o = f32_max(a_i, b_i);
  assign min_o = f32_min(a_i, b_i);
  assign to_f32_o = fp_to_f32(raw_i, dt_i);
  assign from_f32_o = fp_from_f32(a_i, dt_i);
  assign div_o = f32_div(a_i, b_i);
  assign sqrt_o = f32_sqrt(a_i);
  assign act_o = fp_act(fn_i, a_i);

endmodule
