// Test-bench wrapper of the partial-sum buffer (rtl/ncore_psum.sv) for the Catch2 bench next to
// it: the PSUM of preset `Preset` (ncore_cfg_pkg::preset) with NumEngRd engine read ports and
// NumEngWr engine write ports, every port on the wrapper's ports. The bench builds it on the tiny
// preset with three read and two write ports, so that arbitration between engine ports is
// exercised, and on the trn2 preset with one port per side, as the core instances it. The
// storage and the performance counters are read (and the storage preloaded) by the bench through
// u_psum.mem_q and u_psum.perf_*_bytes_q, which the RTL marks public_flat_rd.
module ncore_psum_tb
  import ncore_cfg_pkg::*;
#(
  parameter int unsigned  Preset   = 2,
  parameter int unsigned  NumEngRd = 3,
  parameter int unsigned  NumEngWr = 2,
  localparam cfg_t        Cfg      = preset(Preset),
  localparam int unsigned P        = Cfg.NumPartitions,
  localparam int unsigned AddrW    = $clog2(Cfg.PsumBytes),
  localparam int unsigned WordW    = $clog2(Cfg.PsumBytes / 4)
) (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  input  logic [P-1:0]                      te_valid_i,
  input  logic [P-1:0][WordW-1:0]           te_addr_i,
  input  logic [P-1:0][31:0]                te_data_i,
  input  logic [P-1:0]                      te_acc_i,
  input  logic [NumEngRd-1:0]               er_req_i,
  input  logic [NumEngRd-1:0][AddrW-1:0]    er_addr_i,
  input  logic [NumEngRd-1:0][P-1:0]        er_mask_i,
  output logic [NumEngRd-1:0]               er_gnt_o,
  output logic [NumEngRd-1:0][P-1:0][31:0]  er_rdata_o,
  input  logic [NumEngWr-1:0]               ew_req_i,
  input  logic [NumEngWr-1:0][AddrW-1:0]    ew_addr_i,
  input  logic [NumEngWr-1:0][P-1:0]        ew_mask_i,
  input  logic [NumEngWr-1:0][3:0]          ew_ben_i,
  input  logic [NumEngWr-1:0][P-1:0][31:0]  ew_wdata_i,
  output logic [NumEngWr-1:0]               ew_gnt_o
);

  ncore_psum #(.Cfg(Cfg), .NumEngRd(NumEngRd), .NumEngWr(NumEngWr)) u_psum (
    .clk_i, .rst_ni,
    .te_valid_i, .te_addr_i, .te_data_i, .te_acc_i,
    .er_req_i, .er_addr_i, .er_mask_i, .er_gnt_o, .er_rdata_o,
    .ew_req_i, .ew_addr_i, .ew_mask_i, .ew_ben_i, .ew_wdata_i, .ew_gnt_o);

endmodule
