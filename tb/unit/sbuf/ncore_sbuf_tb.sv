// Test-bench wrapper of the state buffer (rtl/ncore_sbuf.sv) on the tiny preset, for the Catch2
// bench next to it: the SBUF with NumEngRd engine read ports, NumEngWr engine write ports and
// the preset's two DMA ports on each side, every port on the wrapper's ports. The bench builds it
// twice: with one engine port per side (as ncore_top uses it) and with two, so that arbitration
// within the engine side is exercised too. The storage is read (and preloaded) by the bench
// through u_sbuf.mem_q, which the RTL marks public_flat_rd.
module ncore_sbuf_tb
  import ncore_cfg_pkg::*;
#(
  parameter int unsigned  NumEngRd  = 2,
  parameter int unsigned  NumEngWr  = 2,
  localparam cfg_t        Cfg       = CfgTiny,
  localparam int unsigned P         = Cfg.NumPartitions,
  localparam int unsigned NumDma    = Cfg.DmaEngines,
  localparam int unsigned AddrW     = $clog2(Cfg.SbufBytes),
  localparam int unsigned LineW     = Cfg.SbufLineBytes * 8,
  localparam int unsigned LineAddrW = AddrW - $clog2(Cfg.SbufLineBytes),
  localparam int unsigned PartW     = $clog2(P)
) (
  input  logic                                clk_i,
  input  logic                                rst_ni,
  input  logic [NumEngRd-1:0]                 er_req_i,
  input  logic [NumEngRd-1:0][AddrW-1:0]      er_addr_i,
  input  logic [NumEngRd-1:0][P-1:0]          er_mask_i,
  output logic [NumEngRd-1:0]                 er_gnt_o,
  output logic [NumEngRd-1:0][P-1:0][31:0]    er_rdata_o,
  input  logic [NumEngWr-1:0]                 ew_req_i,
  input  logic [NumEngWr-1:0][AddrW-1:0]      ew_addr_i,
  input  logic [NumEngWr-1:0][P-1:0]          ew_mask_i,
  input  logic [NumEngWr-1:0][3:0]            ew_ben_i,
  input  logic [NumEngWr-1:0][P-1:0][31:0]    ew_wdata_i,
  output logic [NumEngWr-1:0]                 ew_gnt_o,
  input  logic [NumDma-1:0]                   dr_req_i,
  input  logic [NumDma-1:0][PartW-1:0]        dr_part_i,
  input  logic [NumDma-1:0][LineAddrW-1:0]    dr_line_i,
  output logic [NumDma-1:0]                   dr_gnt_o,
  output logic [NumDma-1:0][LineW-1:0]        dr_rdata_o,
  input  logic [NumDma-1:0]                   dw_req_i,
  input  logic [NumDma-1:0][PartW-1:0]        dw_part_i,
  input  logic [NumDma-1:0][LineAddrW-1:0]    dw_line_i,
  input  logic [NumDma-1:0][Cfg.SbufLineBytes-1:0] dw_ben_i,
  input  logic [NumDma-1:0][LineW-1:0]        dw_wdata_i,
  output logic [NumDma-1:0]                   dw_gnt_o
);

  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(NumEngRd), .NumEngWr(NumEngWr)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i, .er_addr_i, .er_mask_i, .er_gnt_o, .er_rdata_o,
    .ew_req_i, .ew_addr_i, .ew_mask_i, .ew_ben_i, .ew_wdata_i, .ew_gnt_o,
    .dr_req_i, .dr_part_i, .dr_line_i, .dr_gnt_o, .dr_rdata_o,
    .dw_req_i, .dw_part_i, .dw_line_i, .dw_ben_i, .dw_wdata_i, .dw_gnt_o);

endmodule
