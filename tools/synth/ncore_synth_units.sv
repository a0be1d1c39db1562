// The datapaths of the core's engines as Yosys 0.23 can read them (tools/synth, make synth): each
// module computes what one lane of an engine computes per element, by the same package functions
// the engine's RTL calls, on one-dimensional ports. The engines themselves hold their lanes in
// packed multi-dimensional vectors ([P-1:0][31:0]), which Yosys 0.23 does not read
// (docs/synthesis.md), so their arithmetic is synthesized here, lane by lane; the engines' control (state
// machines, address generators, arbitration) is not.
//
// A unit's ports: the operands and controls an engine's lane takes (registered, as the engines
// register what their lanes compute), its result.

// The tensor engine's PE: a weight and a moving value unpacked at the array's edge (pe_unpack),
// one multiply-add into the partial sum from above (pe_fma), registered.
module ncore_synth_pe
  import ncore_fp_pkg::*;
(
  input  logic        clk_i,
  input  logic [31:0] w_i,
  input  logic [31:0] x_i,
  input  logic [31:0] ps_i,
  output logic [31:0] ps_o
);
  always_ff @(posedge clk_i) ps_o <= pe_fma(pe_unpack(w_i), pe_unpack(x_i), ps_i);
endmodule

// A vector engine lane (ncore_dve): its input converted to fp32, the ALU op on two fp32 operands
// (every op of the ISA: fp_alu), the result rounded once to the destination dtype.
module ncore_synth_dve_lane
  import ncore_isa_pkg::*;
  import ncore_fp_pkg::*;
(
  input  logic        clk_i,
  input  alu_op_e     op_i,
  input  dtype_e      src_dt_i,
  input  dtype_e      dst_dt_i,
  input  logic [31:0] a_i,        // fp32
  input  logic [31:0] raw_i,      // the element on the read port, its dtype's bits
  output logic [31:0] r_o
);
  always_ff @(posedge clk_i) r_o <= fp_from_f32(fp_alu(op_i, a_i, fp_to_f32(raw_i, src_dt_i)), dst_dt_i);
endmodule

// A scalar engine lane (ncore_act): func(x * scale + bias) in fp32, rounded once to the
// destination dtype, and the add-reduce accumulator. fp_act is a `unique case` on the function
// code, each item one function's circuit: here each code's item is an instance of its own
// (ncore_synth_act_func, fp_act with the code constant) and fn_i selects among their results,
// the same hardware. (Written as the one call fp_act(fn_i, ...), the lane is one process of
// 231,130 signals to Yosys 0.23, whose `proc` then converts about two a second.)
module ncore_synth_act_lane
  import ncore_isa_pkg::*;
  import ncore_fp_pkg::*;
(
  input  logic        clk_i,
  input  act_func_e   fn_i,
  input  dtype_e      dst_dt_i,
  input  logic [31:0] x_i,        // fp32
  input  logic [31:0] scale_i,
  input  logic [31:0] bias_i,
  output logic [31:0] r_o,
  output logic [31:0] acc_o
);
  localparam int unsigned W     = $bits(fn_i);
  localparam int unsigned Codes = 1 << W;
  logic [31:0]         x, f;
  logic [32*Codes-1:0] fr;  // code c's result at [32 c +: 32]
  assign x = f32_add(f32_mul(x_i, scale_i), bias_i);
  for (genvar c = 0; c < Codes; c++) begin : g_fn
    ncore_synth_act_func #(.W(W), .Fn(c)) u_fn (.x_i(x), .r_o(fr[32*c +: 32]));
  end
  assign f = fr[32*fn_i +: 32];
  always_ff @(posedge clk_i) begin
    r_o   <= fp_from_f32(f, dst_dt_i);
    acc_o <= f32_add(acc_o, f);
  end
endmodule

// One item of fp_act's case: the function of code Fn (the identity for a code the ISA does not
// define, as fp_act's default).
module ncore_synth_act_func
  import ncore_isa_pkg::*;
  import ncore_fp_pkg::*;
#(
  parameter int unsigned W  = 5,  // the bits of act_func_e
  parameter int unsigned Fn = 0
) (
  input  logic [31:0] x_i,
  output logic [31:0] r_o
);
  localparam logic [W-1:0] Code = Fn;
  assign r_o = fp_act(Code, x_i);
endmodule

// A DMA engine's cast of one element (ncore_dma_engine, between dtypes that differ): through fp32.
module ncore_synth_dma_cast
  import ncore_isa_pkg::*;
  import ncore_fp_pkg::*;
(
  input  logic        clk_i,
  input  dtype_e      src_dt_i,
  input  dtype_e      dst_dt_i,
  input  logic [31:0] raw_i,
  output logic [31:0] r_o
);
  always_ff @(posedge clk_i) r_o <= fp_from_f32(fp_to_f32(elem_bits(raw_i, src_dt_i), src_dt_i), dst_dt_i);
endmodule

// A PSUM partition's accumulation of the tensor engine's result (ncore_prim_banked_mem's lane
// write port): stored + data in fp32.
module ncore_synth_psum_acc
  import ncore_fp_pkg::*;
(
  input  logic        clk_i,
  input  logic        acc_i,
  input  logic [31:0] old_i,
  input  logic [31:0] data_i,
  output logic [31:0] r_o
);
  always_ff @(posedge clk_i) r_o <= acc_i ? f32_add(old_i, data_i) : data_i;
endmodule
