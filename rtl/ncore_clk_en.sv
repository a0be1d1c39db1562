// Fractional clock enable.
//
// The core runs on one clock at the fastest engine rate (the tensor engine's); slower engines
// advance only on cycles where their enable is high. An accumulator adds Num every cycle and
// wraps at Den, so exactly Num of every Den cycles are enabled and the engine runs at
// clock * Num / Den with no drift (trn2: vector engine 2/5 of 2.4 GHz = 0.96 GHz).
//
// The pattern repeats every Den cycles, which is what lets the SystemC top level skip idle
// time in multiples of the enables' common period without changing any phase.
`include "ncore_assert.svh"

module ncore_clk_en #(
  parameter int unsigned Num = 1,
  parameter int unsigned Den = 1
) (
  input  logic clk_i,
  input  logic rst_ni,
  output logic en_o
);
  localparam int unsigned AccW = (Den > 1) ? $clog2(Den + Num) : 1;

  logic [AccW-1:0] acc_q;
  logic [AccW:0] sum;

  assign sum = {1'b0, acc_q} + (AccW + 1)'(Num);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      acc_q <= '0;
      en_o  <= 1'b0;
    end else if (sum >= (AccW + 1)'(Den)) begin
      acc_q <= AccW'(sum - (AccW + 1)'(Den));
      en_o  <= 1'b1;
    end else begin
      acc_q <= AccW'(sum);
      en_o  <= 1'b0;
    end
  end

  // The accumulator stays below its period.
  `ASSERT(a_acc, 32'(acc_q) < Den, $sformatf("accumulator %0d not below %0d", acc_q, Den))
endmodule
