// Test-bench wrapper of one PE multiply-add for the Catch2 bench next to it: the functions the PE
// array applies to one element, purely combinational. w_i and x_i are element bits of dtype dt_i
// (in the low bits), widened to fp32 as the tensor engine's loader and streamer do
// (ncore_fp_pkg::fp_to_f32), unpacked as the array's edge does (pe_unpack) and multiplied and
// added to the fp32 acc_i (pe_fma). The bench compares r_o with pe_fma of
// firmware/include/ncore/numerics.hpp.
module ncore_pe_fma_tb
  import ncore_isa_pkg::*;
  import ncore_fp_pkg::*;
(
  input  dtype_e      dt_i,
  input  logic [31:0] w_i,
  input  logic [31:0] x_i,
  input  logic [31:0] acc_i,
  output logic [31:0] r_o
);
  assign r_o = pe_fma(pe_unpack(fp_to_f32(w_i, dt_i)), pe_unpack(fp_to_f32(x_i, dt_i)), acc_i);
endmodule
