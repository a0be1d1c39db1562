// Simulation-only tensor-engine PE array: the same module, ports, cycle timing and bits as
// rtl/ncore_pe_array.sv, with each moving column's sums computed in C++ when the column is
// presented (sim/core/fast_pe.cpp, through DPI-C). Not synthesizable and not part of the RTL
// (rtl/ncore.f): the opt-in `_fastpe` models compile this file in place of ncore_pe_array.sv
// (sim/CMakeLists.txt), `ncore-sim --pe-model fast` runs them.
//
// Why it is the same. In the systolic array a column presented in cycle c reaches PE(k, j) at
// the edge ending cycle c + 1 + k + j, and a stationary column presented in cycle c' reaches it
// at the edge ending c' + 1 + k + j: both travel with the same skew, so every PE sees the
// weight updates and the moving columns in the order they were presented (a load and a moving
// column presented in the same cycle reach a PE at the same edge, where the multiply reads the
// weight from before the load). So computing a column's sums when it is presented, from the
// weights as of the columns presented before it, gives the array's values whatever the
// interleaving of loads and multiplies. PE(k, j)'s step is one fused multiply-add rounded to
// nearest even (pe_fma), which is C's fmaf; a row outside mv_rows_i or a column off in the set
// passes the sum unchanged, and a NaN result is the canonical 0x7FC00000 (pe_fma returns it
// whenever an input or the step is NaN, and a NaN stays NaN down the column).
//
// The results wait in a delay line indexed by presentation slot, as the tags do: column j of
// the column presented in slot s is on out_data_o[j] when the slot P + 1 + j cycles old is s,
// as out_valid_o and out_tag_o are (the RTL array's own time base, tag history and activity
// counter: ncore_pe_timing).
// Outside a valid column out_data_o holds whatever the delay line holds (the RTL's shows the
// partial sums flowing past): the writer reads it only with out_valid_o.
module ncore_pe_array
  import ncore_cfg_pkg::*;
#(
  parameter int unsigned  Preset = 0,  // the preset by number, for a bench that Verilates this alone (-GPreset)
  parameter cfg_t         Cfg    = preset(Preset),
  /* verilator lint_off UNUSEDPARAM */
  parameter int unsigned  Groups = 2,    // unused here (the RTL's column groups)
  /* verilator lint_on UNUSEDPARAM */
  parameter int unsigned  TagW   = 8,
  localparam int unsigned P      = Cfg.NumPartitions,
  localparam int unsigned ColW   = $clog2(P)
) (
`include "ncore_pe_array_ports.svh"  // the RTL array's ports
);
  localparam int unsigned MaxP = 128;     // the DPI-C functions' fixed width
  localparam int unsigned D    = 2 * P;
  localparam int unsigned DW   = $clog2(D);

  // The C++ state of this instance: both weight sets and the off flags of their columns.
  import "DPI-C" function chandle ncore_fastpe_new(input int unsigned p);
  import "DPI-C" function void ncore_fastpe_free(input chandle h);
  // Stationary column `col` of set `set` (and, if `last`, the columns to its right off).
  import "DPI-C" function void ncore_fastpe_load(input chandle h, input bit wset, input int unsigned col,
                                                 input bit last, input bit [MaxP-1:0][31:0] data);
  // A moving column's P column sums, from +0 down the rows in `rows`.
  import "DPI-C" function void ncore_fastpe_multiply(input chandle h, input bit wset, input bit [MaxP-1:0] rows,
                                                     input bit [MaxP-1:0][31:0] data,
                                                     output bit [MaxP-1:0][31:0] sums);

  chandle h;
  initial h = ncore_fastpe_new(P);
  final ncore_fastpe_free(h);

  logic [DW-1:0]      t_q;               // the slot of this cycle (ncore_pe_timing)
  logic [31:0]        res_q  [D][P];     // the sums of the column presented in each slot

  // The same time base, activity and tag history as the RTL array.
  ncore_pe_timing #(.P(P), .TagW(TagW)) u_timing (
    .clk_i, .rst_ni, .mv_valid_i, .mv_tag_i, .ld_valid_i, .slot_o(t_q), .busy_o, .out_valid_o, .out_tag_o);

  // A multiply reads the weights from before a load presented in the same cycle.
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      if (mv_valid_i) begin
        bit [MaxP-1:0][31:0] sums;
        ncore_fastpe_multiply(h, mv_set_i, MaxP'(mv_rows_i), (MaxP * 32)'(mv_data_i), sums);
        for (int j = 0; j < P; j++) res_q[t_q][j] = sums[j];
      end
      if (ld_valid_i) ncore_fastpe_load(h, ld_set_i, 32'(ld_col_i), ld_last_i, (MaxP * 32)'(ld_data_i));
    end
  end

  always_comb begin
    for (int j = 0; j < P; j++) out_data_o[j] = res_q[t_q - DW'(P + 1 + j)][j];
  end

endmodule
