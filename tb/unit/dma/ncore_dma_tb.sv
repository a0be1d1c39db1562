// Test-bench wrapper of the DMA block (rtl/ncore_dma.sv: queue slots and engines) on the tiny
// preset, for the Catch2 bench next to it: the block on the DMA ports of an SBUF
// (rtl/ncore_sbuf.sv), as in ncore_top, with its instruction port and its HBM ports on the
// wrapper's ports. The bench plays the sequencer and the HBM side (credits, in-order read data,
// write acknowledgements) and loads / reads the storage through u_sbuf.mem_q (public_flat_rd).
//
// The SBUF's engine ports are on the wrapper too, so the bench can put other traffic on the
// banks the DMA uses: reads anywhere, writes to a region no transfer touches (the bench mirrors
// them into the golden model).
//
// The HBM ports and the SBUF DMA ports are ncore_mem_pkg's structs (the Verilated model's ports,
// one per struct).
//
// Clock enable: ce_sel_i = 1 takes it from ncore_clk_en at the preset's DMA ratio
// (DmaCeNum/DmaCeDen, as ncore_top does); ce_sel_i = 0 takes ce_i from the bench. ce_o shows
// the enable the block sees, so the bench can count DMA cycles.
module ncore_dma_tb
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_mem_pkg::*;
#(
  localparam cfg_t        Cfg    = CfgTiny,
  localparam int unsigned Q      = Cfg.DmaQueues,
  localparam int unsigned E      = Cfg.DmaEngines,
  localparam int unsigned P      = Cfg.NumPartitions,
  localparam int unsigned AddrW  = $clog2(Cfg.SbufBytes)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      ce_sel_i,
  input  logic                      ce_i,
  output logic                      ce_o,
  // instruction port
  input  logic                      insn_valid_i,
  input  insn_t                     insn_i,
  output logic [Q-1:0]              q_free_o,
  output logic [Q-1:0]              rd_start_o,
  output logic [Q-1:0][E-1:0]       done_o,
  output logic                      busy_o,
  output logic [63:0]               perf_desc_cycles_o,
  // HBM ports
  output hbm_req_t                  hbm_req_o [E],
  input  hbm_rsp_t                  hbm_rsp_i [E],
  // other SBUF traffic
  input  logic                      er_req_i,
  input  logic [AddrW-1:0]          er_addr_i,
  input  logic [P-1:0]              er_mask_i,
  output logic                      er_gnt_o,
  input  logic                      ew_req_i,
  input  logic [AddrW-1:0]          ew_addr_i,
  input  logic [P-1:0]              ew_mask_i,
  input  logic [3:0]                ew_ben_i,
  input  logic [P-1:0][31:0]        ew_wdata_i,
  output logic                      ew_gnt_o,
  // the engines' SBUF DMA ports, for the bench's check that an engine touches only its own
  // partitions
  output line_rd_req_t              sr_req_o [E],
  output line_rd_rsp_t              sr_rsp_o [E],
  output line_wr_req_t              sw_req_o [E],
  output line_wr_rsp_t              sw_rsp_o [E]
);
  logic ce_div, ce;

  logic [P-1:0][31:0]        unused_er_rdata;

  ncore_clk_en #(.Num(Cfg.DmaCeNum), .Den(Cfg.DmaCeDen)) u_ce (.clk_i, .rst_ni, .en_o(ce_div));
  assign ce   = ce_sel_i ? ce_div : ce_i;
  assign ce_o = ce;

  logic [63:0]               unused_perf [2];  // the memories' and engine's counters
  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(1), .NumEngWr(1)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i, .er_addr_i, .er_mask_i, .er_gnt_o, .er_rdata_o(unused_er_rdata),
    .ew_req_i, .ew_addr_i, .ew_mask_i, .ew_ben_i, .ew_wdata_i, .ew_gnt_o,
    .dr_req_i(sr_req_o), .dr_rsp_o(sr_rsp_o), .dw_req_i(sw_req_o), .dw_rsp_o(sw_rsp_o),
    .perf_rd_bytes_o(unused_perf[0]), .perf_wr_bytes_o(unused_perf[1]));

  ncore_dma #(.Cfg(Cfg)) u_dma (
    .clk_i, .rst_ni, .ce_i(ce),
    .insn_valid_i, .insn_i, .q_free_o, .rd_start_o, .done_o, .busy_o, .perf_desc_cycles_o,
    .sr_req_o, .sr_rsp_i(sr_rsp_o), .sw_req_o, .sw_rsp_i(sw_rsp_o), .hbm_req_o, .hbm_rsp_i);

endmodule
