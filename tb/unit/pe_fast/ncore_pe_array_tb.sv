// The PE array alone, for a preset (its Cfg is a struct, so a top-level -G cannot set it): the
// fast-PE equivalence bench Verilates this twice, once with rtl/ncore_pe_array.sv and once with
// the simulation-only rtl/sim/ncore_pe_array.sv, and drives both with the same columns.
module ncore_pe_array_tb
  import ncore_cfg_pkg::*;
#(
  parameter int unsigned  Preset = 2,
  localparam cfg_t        Cfg    = preset(Preset),
  localparam int unsigned P      = Cfg.NumPartitions,
  localparam int unsigned ColW   = $clog2(P),
  localparam int unsigned TagW   = 8
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     mv_valid_i,
  input  logic                     mv_set_i,
  input  logic [P-1:0]             mv_rows_i,
  input  logic [P-1:0][31:0]       mv_data_i,
  input  logic [TagW-1:0]          mv_tag_i,
  input  logic                     ld_valid_i,
  input  logic                     ld_set_i,
  input  logic [ColW-1:0]          ld_col_i,
  input  logic                     ld_last_i,
  input  logic [P-1:0][31:0]       ld_data_i,
  output logic [P-1:0]             out_valid_o,
  output logic [P-1:0][TagW-1:0]   out_tag_o,
  output logic [P-1:0][31:0]       out_data_o,
  output logic                     busy_o
);
  ncore_pe_array #(.Cfg(Cfg), .Groups(2), .TagW(TagW)) u_array (.*);
endmodule
