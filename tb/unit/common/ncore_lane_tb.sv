// Test-bench wrapper of a lane engine, the vector engine (rtl/ncore_dve.sv) or the scalar engine
// (rtl/ncore_act.sv) as Engine says (its ncore_isa_pkg::engine_e id: ENGINE_DVE, ENGINE_ACT),
// for the Catch2 benches of tb/unit/dve and tb/unit/act: the engine's read and write ports
// (rtl/ncore_mem_pkg.sv's structs) on one engine read and one engine write port of an SBUF
// (rtl/ncore_sbuf.sv) and of a PSUM (rtl/ncore_psum.sv), routed by operand as in ncore_top
// (rtl/ncore_eng_route.sv); the requests' req and psum and the responses' gnt are on the
// wrapper's ports for the timing checks. The benches load and read both memories
// through u_sbuf.mem_q and u_psum.mem_q (public_flat_rd).
//
// Other traffic, on the wrapper's ports, makes the engine lose arbitration: the SBUF's DMA ports
// (reads anywhere, writes where the instruction does not look), a PSUM engine read port that wins
// bank conflicts over the engine's (port 0), and the PSUM's tensor-engine write port, which has
// priority over every engine write to its banks (overwrites where the instruction does not look).
// The SBUF's DMA ports and the PSUM's tensor-engine port are ncore_mem_pkg's structs (the
// Verilated model's ports, one per struct).
//
// Clock enable: ce_sel_i = 1 takes it from ncore_clk_en at the preset's ratio for the engine
// (DveCeNum/DveCeDen, ActCeNum/ActCeDen); ce_sel_i = 0 takes ce_i from the bench. Both are
// registered first, as ncore_top registers its inputs, so that no logic of the engine is
// combinational from a port (Verilator would evaluate it again on every eval()); ce_o shows the
// enable the engine sees. Preset 2 (tiny) is the unit benches'; 0 (trn2) the full-width timing
// and speed tests'.
module ncore_lane_tb
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_mem_pkg::*;
#(
  parameter int unsigned  Preset = 2,
  parameter int unsigned  Engine = 32'(ENGINE_DVE),
  localparam cfg_t        Cfg    = preset(Preset),
  localparam int unsigned P      = Cfg.NumPartitions,
  localparam int unsigned AddrW  = $clog2(Cfg.SbufBytes),
  localparam int unsigned E      = Cfg.DmaEngines,
  localparam int unsigned PAddrW = $clog2(Cfg.PsumBytes)
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
  input  line_rd_req_t              dr_req_i [E],
  output line_rd_rsp_t              dr_rsp_o [E],
  input  line_wr_req_t              dw_req_i [E],
  output line_wr_rsp_t              dw_rsp_o [E],
  // PSUM traffic: an engine read port that wins bank conflicts, and tensor-engine overwrites
  input  logic                      pn_req_i,
  input  logic [PAddrW-1:0]         pn_addr_i,
  input  logic [P-1:0]              pn_mask_i,
  output logic                      pn_gnt_o,
  input  lane_wr_req_t              tw_req_i
);
  logic               ce_div, ce, ce_sel_q, ce_q;
  eng_rd_req_t        rd_req;
  eng_rd_rsp_t        rd_rsp;
  eng_wr_req_t        wr_req;
  eng_wr_rsp_t        wr_rsp;
  logic [P-1:0][31:0] s_rdata;
  logic               s_rd_req, s_wr_req, p_rd_req, p_wr_req, s_rd_gnt, s_wr_gnt, p_wr_gnt;
  logic [1:0]         p_rd_gnt;
  logic [1:0][P-1:0][31:0]   p_rdata;
  logic [P-1:0][31:0]        unused_pn_rdata;

  localparam bit Act = Engine == 32'(ENGINE_ACT);

  ncore_clk_en #(.Num(Act ? Cfg.ActCeNum : Cfg.DveCeNum), .Den(Act ? Cfg.ActCeDen : Cfg.DveCeDen)) u_ce (
    .clk_i, .rst_ni, .en_o(ce_div));
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

  // PSUM read port 1 is the engine's, port 0 the other traffic's (it wins bank conflicts).
  // What both memories see of the engine's requests: the preset's address bits and lanes.
  logic [AddrW-1:0]   rd_addr, wr_addr;
  logic [P-1:0]       rd_mask, wr_mask;
  logic [P-1:0][31:0] wr_data;
  assign {rd_addr, rd_mask} = {AddrW'(rd_req.addr), P'(rd_req.mask)};
  assign {wr_addr, wr_mask, wr_data} = {AddrW'(wr_req.addr), P'(wr_req.mask), (P * 32)'(wr_req.data)};
  ncore_eng_route #(.P(P)) u_route (
    .clk_i, .rst_ni, .rd_req_i(rd_req), .rd_rsp_o(rd_rsp), .wr_req_i(wr_req), .wr_rsp_o(wr_rsp),
    .sb_rd_req_o(s_rd_req), .sb_wr_req_o(s_wr_req), .sb_rd_gnt_i(s_rd_gnt), .sb_wr_gnt_i(s_wr_gnt), .sb_rd_data_i(s_rdata),
    .ps_rd_req_o(p_rd_req), .ps_wr_req_o(p_wr_req), .ps_rd_gnt_i(p_rd_gnt[1]), .ps_wr_gnt_i(p_wr_gnt),
    .ps_rd_data_i(p_rdata[1]));
  assign {rd_req_o, rd_psum_o, rd_gnt_o} = {rd_req.req, rd_req.psum, rd_rsp.gnt};
  assign {wr_req_o, wr_psum_o, wr_gnt_o} = {wr_req.req, wr_req.psum, wr_rsp.gnt};
  assign pn_gnt_o        = p_rd_gnt[0];
  assign unused_pn_rdata = p_rdata[0];

  logic [63:0]               unused_perf [4];  // the memories' and engine's counters
  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(1), .NumEngWr(1)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i(s_rd_req), .er_addr_i(rd_addr), .er_mask_i(rd_mask), .er_gnt_o(s_rd_gnt), .er_rdata_o(s_rdata),
    .ew_req_i(s_wr_req), .ew_addr_i(wr_addr), .ew_mask_i(wr_mask), .ew_ben_i(wr_req.ben), .ew_wdata_i(wr_data),
    .ew_gnt_o(s_wr_gnt),
    .dr_req_i, .dr_rsp_o, .dw_req_i, .dw_rsp_o,
    .perf_rd_bytes_o(unused_perf[0]), .perf_wr_bytes_o(unused_perf[1]));

  ncore_psum #(.Cfg(Cfg), .NumEngRd(2), .NumEngWr(1)) u_psum (
    .clk_i, .rst_ni,
    .pe_req_i(tw_req_i),
    .er_req_i({p_rd_req, pn_req_i}), .er_addr_i({PAddrW'(rd_addr), pn_addr_i}), .er_mask_i({rd_mask, pn_mask_i}),
    .er_gnt_o(p_rd_gnt), .er_rdata_o(p_rdata),
    .ew_req_i(p_wr_req), .ew_addr_i(PAddrW'(wr_addr)), .ew_mask_i(wr_mask), .ew_ben_i(wr_req.ben), .ew_wdata_i(wr_data),
    .ew_gnt_o(p_wr_gnt),
    .perf_rd_bytes_o(unused_perf[2]), .perf_wr_bytes_o(unused_perf[3]));

  if (Act) begin : g_act
    ncore_act #(.Cfg(Cfg)) u_act (
      .clk_i, .rst_ni, .ce_i(ce), .insn_valid_i, .insn_i, .insn_ready_o, .rd_start_o, .done_o, .busy_o,
      .rd_req_o(rd_req), .rd_rsp_i(rd_rsp), .wr_req_o(wr_req), .wr_rsp_i(wr_rsp));
  end else begin : g_dve
    ncore_dve #(.Cfg(Cfg)) u_dve (
      .clk_i, .rst_ni, .ce_i(ce), .insn_valid_i, .insn_i, .insn_ready_o, .rd_start_o, .done_o, .busy_o,
      .rd_req_o(rd_req), .rd_rsp_i(rd_rsp), .wr_req_o(wr_req), .wr_rsp_i(wr_rsp));
  end

endmodule
