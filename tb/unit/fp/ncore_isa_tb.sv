// Test-bench wrapper that exposes a few fields of the packed instruction word ncore_isa_pkg::insn_t,
// so that the Catch2 bench can check that the C++ isa::encode bit layout is the RTL's: it encodes
// random isa::Insn values, drives the bits into insn_i and compares the fields read back here.
// The fields are spread over the whole word (top, middle, bottom; plain, enum, array, signed).
module ncore_isa_tb
  import ncore_isa_pkg::*;
(
  input  insn_t              insn_i,
  output opcode_e            opcode_o,
  output logic [3:0]         dma_queue_o,
  output sem_cond_e          wait_cond_o,
  output logic [31:0]        upd_val_o,
  output logic [31:0]        imm1_o,
  output logic [39:0]        dst_offset_o,
  output logic [31:0]        src0_size2_o,     // src0.size[2]
  output logic signed [63:0] src1_stride3_o,   // src1.stride[3], sign-extended
  output logic [39:0]        s1_offset_o,
  output act_func_e          func_o,
  output logic [2:0]         red_axes_o,
  output logic [7:0]         dst2_num_part_o,
  output logic               parity_o          // XOR of all InsnBits bits (every bit reaches the port)
);

  assign opcode_o = insn_i.opcode;
  assign dma_queue_o = insn_i.dma_queue;
  assign wait_cond_o = insn_i.wait_cond;
  assign upd_val_o = insn_i.upd_val;
  assign imm1_o = insn_i.imm1;
  assign dst_offset_o = insn_i.dst.offset;
  assign src0_size2_o = insn_i.src0.size[2];
  assign src1_stride3_o = 64'($signed(insn_i.src1.stride[3]));
  assign s1_offset_o = insn_i.s1.offset;
  assign func_o = insn_i.func;
  assign red_axes_o = insn_i.red_axes;
  assign dst2_num_part_o = insn_i.dst2.num_part;
  assign parity_o = ^insn_i;

endmodule
