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
// Clock enable: ce_sel_i = 1 takes it from ncore_clk_en at the preset's DMA ratio
// (DmaCeNum/DmaCeDen, as ncore_top does); ce_sel_i = 0 takes ce_i from the bench. ce_o shows
// the enable the block sees, so the bench can count DMA cycles.
module ncore_dma_tb
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
#(
  localparam cfg_t        Cfg    = CfgTiny,
  localparam int unsigned Q      = Cfg.DmaQueues,
  localparam int unsigned E      = Cfg.DmaEngines,
  localparam int unsigned P      = Cfg.NumPartitions,
  localparam int unsigned AddrW  = $clog2(Cfg.SbufBytes),
  localparam int unsigned LineB  = Cfg.SbufLineBytes,
  localparam int unsigned LineW  = LineB * 8,
  localparam int unsigned PartW  = $clog2(P),
  localparam int unsigned SLineW = AddrW - $clog2(LineB),
  localparam int unsigned HLineW = 40 - $clog2(LineB)
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
  output logic [E-1:0]              hq_valid_o,
  input  logic [E-1:0]              hq_credit_i,
  output logic [E-1:0]              hq_we_o,
  output logic [E-1:0][HLineW-1:0]  hq_line_o,
  output logic [E-1:0][LineB-1:0]   hq_ben_o,
  output logic [E-1:0][LineW-1:0]   hq_wdata_o,
  input  logic [E-1:0]              hr_valid_i,
  input  logic [E-1:0][LineW-1:0]   hr_rdata_i,
  input  logic [E-1:0]              ha_valid_i,
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
  // SBUF DMA-port activity: grants and the partition of each engine's port, for the bench's
  // check that an engine touches only its own partitions
  output logic [E-1:0]              sr_gnt_o,
  output logic [E-1:0][PartW-1:0]   sr_part_o,
  output logic [E-1:0]              sw_gnt_o,
  output logic [E-1:0][PartW-1:0]   sw_part_o
);
  logic ce_div, ce;

  logic [E-1:0]              sr_req, sw_req;
  logic [E-1:0][SLineW-1:0]  sr_line, sw_line;
  logic [E-1:0][LineW-1:0]   sr_rdata, sw_wdata;
  logic [E-1:0][LineB-1:0]   sw_ben;
  logic [P-1:0][31:0]        unused_er_rdata;

  ncore_clk_en #(.Num(Cfg.DmaCeNum), .Den(Cfg.DmaCeDen)) u_ce (.clk_i, .rst_ni, .en_o(ce_div));
  assign ce   = ce_sel_i ? ce_div : ce_i;
  assign ce_o = ce;

  logic [63:0]               unused_perf [2];  // the memories' and engine's counters
  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(1), .NumEngWr(1)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i, .er_addr_i, .er_mask_i, .er_gnt_o, .er_rdata_o(unused_er_rdata),
    .ew_req_i, .ew_addr_i, .ew_mask_i, .ew_ben_i, .ew_wdata_i, .ew_gnt_o,
    .dr_req_i(sr_req), .dr_part_i(sr_part_o), .dr_line_i(sr_line), .dr_gnt_o(sr_gnt_o), .dr_rdata_o(sr_rdata),
    .dw_req_i(sw_req), .dw_part_i(sw_part_o), .dw_line_i(sw_line), .dw_ben_i(sw_ben), .dw_wdata_i(sw_wdata),
    .dw_gnt_o(sw_gnt_o),
    .perf_rd_bytes_o(unused_perf[0]), .perf_wr_bytes_o(unused_perf[1]));

  ncore_dma #(.Cfg(Cfg)) u_dma (
    .clk_i, .rst_ni, .ce_i(ce),
    .insn_valid_i, .insn_i, .q_free_o, .rd_start_o, .done_o, .busy_o, .perf_desc_cycles_o,
    .sr_req_o(sr_req), .sr_part_o, .sr_line_o(sr_line), .sr_gnt_i(sr_gnt_o), .sr_rdata_i(sr_rdata),
    .sw_req_o(sw_req), .sw_part_o, .sw_line_o(sw_line), .sw_ben_o(sw_ben), .sw_wdata_o(sw_wdata),
    .sw_gnt_i(sw_gnt_o),
    .hq_valid_o, .hq_credit_i, .hq_we_o, .hq_line_o, .hq_ben_o, .hq_wdata_o,
    .hr_valid_i, .hr_rdata_i, .ha_valid_i);

endmodule
