// Test-bench wrapper of the scalar engine (rtl/ncore_act.sv) for the Catch2 bench next to it: the
// engine on one engine read and one engine write port of an SBUF (rtl/ncore_sbuf.sv) and of a
// PSUM (rtl/ncore_psum.sv), routed by the engine's rd_psum_o/wr_psum_o as ncore_top routes the
// vector engine's: read data comes back from the memory the last granted read went to. The bench
// loads and reads both memories through u_sbuf.mem_q and u_psum.mem_q (public_flat_rd).
//
// Other traffic, on the wrapper's ports, makes the engine lose arbitration: the SBUF's DMA ports
// (reads anywhere, writes where the instruction does not look), a PSUM engine read port that wins
// bank conflicts over the engine's (port 0), and the PSUM's tensor-engine write port, which has
// priority over every engine write to its banks (overwrites where the instruction does not look).
//
// Clock enable: ce_sel_i = 1 takes it from ncore_clk_en at the preset's scalar-engine ratio
// (ActCeNum/ActCeDen); ce_sel_i = 0 takes ce_i from the bench. Both are registered first, as
// ncore_top registers its inputs, so that no logic of the engine is combinational from a port
// (Verilator would evaluate it again on every eval()); ce_o shows the enable the engine sees.
// Preset 2 (tiny) is the unit bench's; 0 (trn2) the full-width timing and speed test's.
module ncore_act_tb
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
#(
  parameter int unsigned  Preset = 2,
  localparam cfg_t        Cfg    = preset(Preset),
  localparam int unsigned P      = Cfg.NumPartitions,
  localparam int unsigned AddrW  = $clog2(Cfg.SbufBytes),
  localparam int unsigned E      = Cfg.DmaEngines,
  localparam int unsigned LineB  = Cfg.SbufLineBytes,
  localparam int unsigned PartW  = $clog2(P),
  localparam int unsigned SLineW = AddrW - $clog2(LineB),
  localparam int unsigned PAddrW = $clog2(Cfg.PsumBytes),
  localparam int unsigned PwW    = $clog2(Cfg.PsumBytes / 4)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      ce_sel_i,
  input  logic                      ce_i,
  output logic                      ce_o,
  input  logic                      insn_valid_i,
  input  insn_t                     insn_i,
  output logic                      insn_ready_o,
  output logic                      rd_start_o,
  output logic                      done_o,
  output logic                      busy_o,
  // the engine's requests and grants, for the timing checks
  output logic                      rd_req_o,
  output logic                      rd_psum_o,
  output logic                      rd_gnt_o,
  output logic                      wr_req_o,
  output logic                      wr_psum_o,
  output logic                      wr_gnt_o,
  // the SBUF's DMA ports: other traffic
  input  logic [E-1:0]              dr_req_i,
  input  logic [E-1:0][PartW-1:0]   dr_part_i,
  input  logic [E-1:0][SLineW-1:0]  dr_line_i,
  output logic [E-1:0]              dr_gnt_o,
  input  logic [E-1:0]              dw_req_i,
  input  logic [E-1:0][PartW-1:0]   dw_part_i,
  input  logic [E-1:0][SLineW-1:0]  dw_line_i,
  input  logic [E-1:0][LineB-1:0]   dw_ben_i,
  input  logic [E-1:0][LineB*8-1:0] dw_wdata_i,
  output logic [E-1:0]              dw_gnt_o,
  // PSUM traffic: an engine read port that wins bank conflicts, and tensor-engine overwrites
  input  logic                      pn_req_i,
  input  logic [PAddrW-1:0]         pn_addr_i,
  input  logic [P-1:0]              pn_mask_i,
  output logic                      pn_gnt_o,
  input  logic [P-1:0]              tw_valid_i,
  input  logic [P-1:0][PwW-1:0]     tw_addr_i,
  input  logic [P-1:0][31:0]        tw_data_i
);
  logic               ce_div, ce, ce_sel_q, ce_q;
  logic [AddrW-1:0]   rd_addr, wr_addr;
  logic [P-1:0]       rd_mask, wr_mask;
  logic [3:0]         wr_ben;
  logic [P-1:0][31:0] rd_data, wr_data, s_rdata;
  logic               s_rd_gnt, s_wr_gnt, p_wr_gnt, rd_sel_q;
  logic [1:0]         p_rd_gnt;
  logic [1:0][P-1:0][31:0]   p_rdata;
  logic [E-1:0][LineB*8-1:0] unused_dr_rdata;
  logic [P-1:0][31:0]        unused_pn_rdata;

  ncore_clk_en #(.Num(Cfg.ActCeNum), .Den(Cfg.ActCeDen)) u_ce (.clk_i, .rst_ni, .en_o(ce_div));
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ce_sel_q <= 1'b0;
      ce_q     <= 1'b0;
    end else begin
      ce_sel_q <= ce_sel_i;
      ce_q     <= ce_i;
    end
  end
  assign ce   = ce_sel_q ? ce_div : ce_q;
  assign ce_o = ce;

  // Routing by operand, as in ncore_top.
  assign rd_gnt_o = rd_psum_o ? p_rd_gnt[1] : s_rd_gnt;
  assign wr_gnt_o = wr_psum_o ? p_wr_gnt : s_wr_gnt;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) rd_sel_q <= 1'b0;
    else if (rd_req_o && rd_gnt_o) rd_sel_q <= rd_psum_o;
  end
  assign rd_data = rd_sel_q ? p_rdata[1] : s_rdata;
  assign pn_gnt_o = p_rd_gnt[0];
  assign unused_pn_rdata = p_rdata[0];

  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(1), .NumEngWr(1)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i(rd_req_o && !rd_psum_o), .er_addr_i(rd_addr), .er_mask_i(rd_mask), .er_gnt_o(s_rd_gnt),
    .er_rdata_o(s_rdata),
    .ew_req_i(wr_req_o && !wr_psum_o), .ew_addr_i(wr_addr), .ew_mask_i(wr_mask), .ew_ben_i(wr_ben),
    .ew_wdata_i(wr_data), .ew_gnt_o(s_wr_gnt),
    .dr_req_i, .dr_part_i, .dr_line_i, .dr_gnt_o, .dr_rdata_o(unused_dr_rdata),
    .dw_req_i, .dw_part_i, .dw_line_i, .dw_ben_i, .dw_wdata_i, .dw_gnt_o);

  ncore_psum #(.Cfg(Cfg), .NumEngRd(2), .NumEngWr(1)) u_psum (
    .clk_i, .rst_ni,
    .te_valid_i(tw_valid_i), .te_addr_i(tw_addr_i), .te_data_i(tw_data_i), .te_acc_i('0),
    .er_req_i({rd_req_o && rd_psum_o, pn_req_i}), .er_addr_i({PAddrW'(rd_addr), pn_addr_i}),
    .er_mask_i({rd_mask, pn_mask_i}), .er_gnt_o(p_rd_gnt), .er_rdata_o(p_rdata),
    .ew_req_i(wr_req_o && wr_psum_o), .ew_addr_i(PAddrW'(wr_addr)), .ew_mask_i(wr_mask), .ew_ben_i(wr_ben),
    .ew_wdata_i(wr_data), .ew_gnt_o(p_wr_gnt));

  ncore_act #(.Cfg(Cfg)) u_act (
    .clk_i, .rst_ni, .ce_i(ce),
    .insn_valid_i, .insn_i, .insn_ready_o, .rd_start_o, .done_o, .busy_o,
    .rd_req_o, .rd_psum_o, .rd_addr_o(rd_addr), .rd_mask_o(rd_mask), .rd_gnt_i(rd_gnt_o), .rd_data_i(rd_data),
    .wr_req_o, .wr_psum_o, .wr_addr_o(wr_addr), .wr_mask_o(wr_mask), .wr_ben_o(wr_ben), .wr_data_o(wr_data),
    .wr_gnt_i(wr_gnt_o));

endmodule
