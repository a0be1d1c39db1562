// The PE array's time base, shared by the systolic array (ncore_pe_array.sv) and the
// simulation-only fast array (rtl/sim/ncore_pe_array.sv), so that both give their results at
// the same cycles with the same valids and tags:
//   - slot_o: the cycle count modulo D = 2 P, the slot of this cycle in the arrays' buffers
//     indexed by time (the skew buffers, the fast array's delay line);
//   - busy_o: high until everything presented (a moving or a stationary column) has left the
//     array, 2 P + 2 cycles after the last presentation;
//   - the tag history: column j's result leaving the bottom row in this cycle belongs to the
//     moving column presented P + 1 + j cycles ago, whose {valid, tag} out_valid_o[j] and
//     out_tag_o[j] show.
`include "ncore_assert.svh"

module ncore_pe_timing #(
  parameter int unsigned  P    = 128,
  parameter int unsigned  TagW = 8,
  localparam int unsigned D    = 2 * P,
  localparam int unsigned DW   = $clog2(D),
  localparam int unsigned ActW = $clog2(2 * P + 3)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     mv_valid_i,
  input  logic [TagW-1:0]          mv_tag_i,
  input  logic                     ld_valid_i,
  output logic [DW-1:0]            slot_o,
  output logic                     busy_o,
  output logic [P-1:0]             out_valid_o,
  output logic [P-1:0][TagW-1:0]   out_tag_o
);
  logic [DW-1:0]      t_q;                  // cycle count modulo D
  logic [ActW-1:0]    act_q;                // cycles until everything presented has left the array
  /*verilator coverage_off*/  // storage: no toggle coverage (make coverage)
  logic [TagW:0]      tagh_q [D];           // {valid, tag} of the moving column of each slot
  /*verilator coverage_on*/

  assign slot_o = t_q;
  assign busy_o = act_q != '0;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      t_q   <= '0;
      act_q <= '0;
    end else begin
      t_q <= t_q + 1'b1;
      if (mv_valid_i || ld_valid_i) act_q <= ActW'(2 * P + 2);
      else if (busy_o)              act_q <= act_q - 1'b1;
    end
  end

  // The tag history is written every cycle, cleared by reset (a loop, hence in place).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int s = 0; s < D; s++) tagh_q[s] = '0;
    end else begin
      tagh_q[t_q] = {mv_valid_i, mv_tag_i};
    end
  end

  // Nothing leaves the array once it is idle: the oldest column busy_o waits for left it 2 P
  // cycles after it was presented (a 1-bit test: the valids are wider than what a concurrent
  // assertion of Verilator 5.006 can sample).
`ifdef NCORE_ASSERT
  logic chk_out_any;
  assign chk_out_any = out_valid_o != '0;
`endif
  `ASSERT_NEVER(a_idle_no_out, !busy_o && chk_out_any, "a result leaves the array while it is idle")

  always_comb begin
    for (int j = 0; j < P; j++) begin
      logic [DW-1:0] s;
      s = t_q - DW'(P + 1 + j);
      out_valid_o[j] = tagh_q[s][TagW];
      out_tag_o[j]   = tagh_q[s][TagW-1:0];
    end
  end
endmodule
