// The PE array's ports (module ncore_pe_array: rtl/ncore_pe_array.sv, and the simulation-only
// rtl/sim/ncore_pe_array.sv with the same ports, timing and bits), included in the port list of
// each (P, ColW and TagW are the module's parameters).
  input  logic                     clk_i,
  input  logic                     rst_ni,
  // moving column: element k is row k's value (fp32 bits); rows outside mv_rows_i pass
  input  logic                     mv_valid_i,
  input  logic                     mv_set_i,
  input  logic [P-1:0]             mv_rows_i,
  input  logic [P-1:0][31:0]       mv_data_i,
  input  logic [TagW-1:0]          mv_tag_i,
  // stationary column ld_col_i: element k is row k's weight (fp32 bits); ld_last_i marks the
  // load's last column (columns to its right are off in that set)
  input  logic                     ld_valid_i,
  input  logic                     ld_set_i,
  input  logic [ColW-1:0]          ld_col_i,
  input  logic                     ld_last_i,
  input  logic [P-1:0][31:0]       ld_data_i,
  // results leaving the bottom row, per column
  output logic [P-1:0]             out_valid_o,
  output logic [P-1:0][TagW-1:0]   out_tag_o,
  output logic [P-1:0][31:0]       out_data_o,
  output logic                     busy_o
