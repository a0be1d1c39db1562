// NeuronCore top: SBUF, PSUM, tensor engine, vector engine, scalar engine, DMA block and the
// engines' clock enables.
//
// One clock at the master rate (the tensor engine's clock); the vector engine, the scalar
// engine and the DMA engines advance on fractional clock enables (ncore_clk_en), so every
// engine keeps its documented rate ratio inside one clock domain and the SBUF stays
// single-clocked.
//
// The sequencers live outside, in the SystemC top level: each engine has an instruction
// port (valid/ready, the decoded ncore_isa_pkg::insn_t) and reports read-start and done
// pulses, from which the sequencers fire semaphore updates. HBM is outside too: the DMA
// engines reach it through one line-wide request/response port each.
//
//            insn ports                              HBM ports (x DmaEngines)
//   ----> [ pe  ] ---rd x2--> [ sbuf ] <--line-- [ dma: engines ] <----->
//   ----> [ dve ] ---rd/wr-->    ^
//   ----> [ act ] ---rd/wr-->    |
//   ---------------------------- | ---------------------^
//           |  pe: per-lane write/accumulate            |
//           +-----> [ psum ] <-- dve, act: rd/wr (by operand)
//
// SBUF engine read ports, in priority order (the lower number wins a bank conflict): the
// tensor engine's moving operand (so the array keeps streaming), the vector engine, the scalar
// engine, the tensor engine's stationary operand (a load has slack: it runs in the shadow of a
// multiply); write ports: the vector engine, then the scalar engine. The PSUM has the same two
// engines on its engine ports, in the same order. The vector and scalar engines' accesses (their
// ports are ncore_mem_pkg's request and response structs) go to the SBUF or the PSUM as each
// operand says (the requests' psum, ncore_eng_route); read data comes back from the memory the
// last granted read went to. The tensor engine's SBUF reads and PSUM writes, the DMA engines'
// SBUF and HBM ports are ncore_mem_pkg's structs too; the memories' engine ports
// (ncore_mem_eng_ports.svh says why) and the core's HBM ports, which the SystemC top level binds,
// are loose signals.
//
// Every input is registered here before any logic sees it, so nothing in the core is
// combinational from a port: the ports' protocols allow the one cycle (instruction ports
// are valid/ready with the sequencer holding off after issuing; HBM requests need a credit).
//
// `busy_o` is high when some engine will change state on its own in the next cycle; when
// it is low the RTL only waits for its ports, and the SystemC top level may skip cycles.
`include "ncore_assert.svh"

module ncore_top
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_mem_pkg::*;
#(
  parameter int unsigned  Preset = 0,
  localparam cfg_t        Cfg    = preset(Preset),
  localparam int unsigned Q      = Cfg.DmaQueues,
  localparam int unsigned E      = Cfg.DmaEngines,
  localparam int unsigned LineB  = Cfg.SbufLineBytes,
  localparam int unsigned LineW  = LineB * 8,
  localparam int unsigned HLineW = Cfg.HbmAddrBits - $clog2(LineB)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // vector engine instruction port
  input  logic                      dve_valid_i,
  input  insn_t                     dve_insn_i,
  output logic                      dve_ready_o,
  output logic                      dve_rd_start_o,
  output logic                      dve_done_o,
  // scalar engine instruction port
  input  logic                      act_valid_i,
  input  insn_t                     act_insn_i,
  output logic                      act_ready_o,
  output logic                      act_rd_start_o,
  output logic                      act_done_o,
  // tensor engine instruction port (ncore_pe: one instruction presented per accept)
  input  logic                      pe_valid_i,
  input  insn_t                     pe_insn_i,
  output logic                      pe_ls_ready_o,
  output logic                      pe_mm_ready_o,
  output logic                      pe_accept_o,
  output logic                      pe_ls_start_o,
  output logic                      pe_mm_start_o,
  output logic                      pe_ls_done_o,
  output logic                      pe_mm_done_o,
  // DMA instruction port
  input  logic                      dma_valid_i,
  input  insn_t                     dma_insn_i,
  output logic [Q-1:0]              dma_q_free_o,
  output logic [Q-1:0]              dma_rd_start_o,
  output logic [Q-1:0][E-1:0]       dma_done_o,
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
  // status
  output logic                      busy_o,
  output logic [2:0]                ce_o,       // {act, dma, dve} clock enables, for monitors
  // performance counters, cleared by rst_ni (ncore_sbuf, ncore_psum and ncore_pe say how each
  // counts): bytes granted on the memories' ports, the tensor engine's MACs and busy cycles
  output logic [63:0]               perf_sbuf_rd_bytes_o,
  output logic [63:0]               perf_sbuf_wr_bytes_o,
  output logic [63:0]               perf_psum_rd_bytes_o,
  output logic [63:0]               perf_psum_wr_bytes_o,
  output logic [63:0]               perf_pe_macs_o,
  output logic [63:0]               perf_pe_busy_o,
  output logic [63:0]               perf_dma_desc_o
);
  localparam int unsigned P      = Cfg.NumPartitions;
  localparam int unsigned AddrW  = $clog2(Cfg.SbufBytes);
  localparam int unsigned PAddrW = $clog2(Cfg.PsumBytes);      // PSUM engine byte address

  logic dve_ce, dma_ce, act_ce;

  // Input registers
  logic                    dve_valid_q, dma_valid_q, pe_valid_q, act_valid_q;
  insn_t                   dve_insn_q, dma_insn_q, pe_insn_q, act_insn_q;
  logic [E-1:0]            hq_credit_q, hr_valid_q, ha_valid_q;
  logic [E-1:0][LineW-1:0] hr_rdata_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      dve_valid_q <= 1'b0;
      dma_valid_q <= 1'b0;
      pe_valid_q  <= 1'b0;
      act_valid_q <= 1'b0;
      hq_credit_q <= '0;
      hr_valid_q  <= '0;
      ha_valid_q  <= '0;
    end else begin
      dve_valid_q <= dve_valid_i;
      dma_valid_q <= dma_valid_i;
      pe_valid_q  <= pe_valid_i;
      act_valid_q <= act_valid_i;
      hq_credit_q <= hq_credit_i;
      hr_valid_q  <= hr_valid_i;
      ha_valid_q  <= ha_valid_i;
    end
  end

  // Payloads: loaded only with their valid, so idle cycles copy nothing.
  always_ff @(posedge clk_i) begin
    if (dve_valid_i) dve_insn_q <= dve_insn_i;
    if (dma_valid_i) dma_insn_q <= dma_insn_i;
    if (pe_valid_i)  pe_insn_q  <= pe_insn_i;
    if (act_valid_i) act_insn_q <= act_insn_i;
    if (hr_valid_i != '0) hr_rdata_q <= hr_rdata_i;
  end

  ncore_clk_en #(.Num(Cfg.DveCeNum), .Den(Cfg.DveCeDen)) u_ce_dve (.clk_i, .rst_ni, .en_o(dve_ce));
  ncore_clk_en #(.Num(Cfg.DmaCeNum), .Den(Cfg.DmaCeDen)) u_ce_dma (.clk_i, .rst_ni, .en_o(dma_ce));
  ncore_clk_en #(.Num(Cfg.ActCeNum), .Den(Cfg.ActCeDen)) u_ce_act (.clk_i, .rst_ni, .en_o(act_ce));

  assign ce_o = {act_ce, dma_ce, dve_ce};

  // SBUF engine read ports: [0] PE moving, [1] DVE, [2] ACT, [3] PE stationary; write ports
  // [0] DVE, [1] ACT
  logic [3:0]              er_req, er_gnt;
  logic [3:0][AddrW-1:0]   er_addr;
  logic [3:0][P-1:0]       er_mask;
  logic [3:0][P-1:0][31:0] er_rdata;
  logic [1:0]              ew_req, ew_gnt;
  logic [1:0][AddrW-1:0]   ew_addr;
  logic [1:0][P-1:0]       ew_mask;
  logic [1:0][3:0]         ew_ben;
  logic [1:0][P-1:0][31:0] ew_wdata;
  // the tensor engine's SBUF read ports: [0] moving, [1] stationary (ncore_mem_pkg's structs)
  eng_rd_req_t               te_rd_req [2];
  eng_rd_rsp_t               te_rd_rsp [2];
  // DMA ports into the SBUF (ncore_mem_pkg's structs)
  line_rd_req_t              sr_req [E];
  line_rd_rsp_t              sr_rsp [E];
  line_wr_req_t              sw_req [E];
  line_wr_rsp_t              sw_rsp [E];
  // PSUM: the tensor engine's write port, engine read and write ports [0] DVE, [1] ACT
  lane_wr_req_t              tw_req;
  logic [1:0]                pr_req, pr_gnt, pw_req, pw_gnt;
  logic [1:0][PAddrW-1:0]    pr_addr, pw_addr;
  logic [1:0][P-1:0][31:0]   pr_rdata;

  // The vector engine ([0]) and the scalar engine ([1]): each has one read and one write port
  // that go to the SBUF or the PSUM per access (ncore_eng_route).
  logic dve_busy, dma_busy, pe_busy, act_busy;
  eng_rd_req_t             en_rd_req [2];
  eng_rd_rsp_t             en_rd_rsp [2];
  eng_wr_req_t             en_wr_req [2];
  eng_wr_rsp_t             en_wr_rsp [2];

  // The tensor engine's reads ([0] moving, [1] stationary) on SBUF read ports 0 and 3: the
  // preset's address bits and lanes.
  for (genvar t = 0; t < 2; t++) begin : g_te
    localparam int unsigned SbRd = 3 * t;
    assign {er_req[SbRd], er_addr[SbRd]} = {te_rd_req[t].req, AddrW'(te_rd_req[t].addr)};
    assign er_mask[SbRd] = P'(te_rd_req[t].mask);
    assign te_rd_rsp[t]  = '{gnt: er_gnt[SbRd], data: (MemLanes * 32)'(er_rdata[SbRd])};
  end

  for (genvar e = 0; e < 2; e++) begin : g_eng
    localparam int unsigned SbRd = e + 1;   // SBUF read port: DVE 1, ACT 2
    // What both memories see of the engine's requests: the preset's address bits and lanes.
    assign er_addr[SbRd] = AddrW'(en_rd_req[e].addr);
    assign er_mask[SbRd] = P'(en_rd_req[e].mask);
    assign pr_addr[e]    = PAddrW'(en_rd_req[e].addr);
    assign ew_addr[e]    = AddrW'(en_wr_req[e].addr);
    assign ew_mask[e]    = P'(en_wr_req[e].mask);
    assign ew_ben[e]     = en_wr_req[e].ben;
    assign ew_wdata[e]   = (P * 32)'(en_wr_req[e].data);
    assign pw_addr[e]    = PAddrW'(en_wr_req[e].addr);
    ncore_eng_route #(.P(P)) u_route (
      .clk_i, .rst_ni, .rd_req_i(en_rd_req[e]), .rd_rsp_o(en_rd_rsp[e]), .wr_req_i(en_wr_req[e]), .wr_rsp_o(en_wr_rsp[e]),
      .sb_rd_req_o(er_req[SbRd]), .sb_wr_req_o(ew_req[e]), .sb_rd_gnt_i(er_gnt[SbRd]), .sb_wr_gnt_i(ew_gnt[e]),
      .sb_rd_data_i(er_rdata[SbRd]), .ps_rd_req_o(pr_req[e]), .ps_wr_req_o(pw_req[e]), .ps_rd_gnt_i(pr_gnt[e]),
      .ps_wr_gnt_i(pw_gnt[e]), .ps_rd_data_i(pr_rdata[e]));
  end

  // A registered instruction or HBM response not yet seen by its engine counts as busy too.
  assign busy_o = dve_busy || dma_busy || pe_busy || act_busy || dve_valid_q || dma_valid_q ||
                  pe_valid_q || act_valid_q || hr_valid_q != '0 || ha_valid_q != '0;

  // What lets the SystemC top level skip cycles: with busy_o low no engine requests anything of
  // the memories or of HBM, so the cycles it skips would have changed nothing. The status and
  // handshake outputs are never unknown (a four-state simulator's check).
`ifdef NCORE_ASSERT
  logic [E-1:0] chk_sr, chk_sw;  // the DMA engines' SBUF requests this cycle
  logic         chk_idle_req;    // a memory or HBM request this cycle (1 bit: the lane masks are wide)
  always_comb for (int e = 0; e < E; e++) {chk_sr[e], chk_sw[e]} = {sr_req[e].req, sw_req[e].req};
  assign chk_idle_req = er_req != '0 || ew_req != '0 || chk_sr != '0 || chk_sw != '0 || pr_req != '0 ||
                        pw_req != '0 || tw_req.valid != '0 || hq_valid_o != '0;
`endif
  `ASSERT_NEVER(a_idle_quiet, !busy_o && chk_idle_req,
                $sformatf("a request with busy_o low (SBUF rd %0h wr %0h, DMA rd %0h wr %0h, PSUM rd %0h wr %0h, HBM %0h)",
                          er_req, ew_req, chk_sr, chk_sw, pr_req, pw_req, hq_valid_o))
  `ASSERT_KNOWN(a_busy_known, busy_o)
  `ASSERT_KNOWN(a_ready_known, {dve_ready_o, act_ready_o, pe_ls_ready_o, pe_mm_ready_o, dma_q_free_o})
  `ASSERT_KNOWN(a_done_known, {dve_done_o, act_done_o, pe_ls_done_o, pe_mm_done_o, dma_done_o})

  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(4), .NumEngWr(2)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i(er_req), .er_addr_i(er_addr), .er_mask_i(er_mask), .er_gnt_o(er_gnt), .er_rdata_o(er_rdata),
    .ew_req_i(ew_req), .ew_addr_i(ew_addr), .ew_mask_i(ew_mask), .ew_ben_i(ew_ben), .ew_wdata_i(ew_wdata),
    .ew_gnt_o(ew_gnt),
    .dr_req_i(sr_req), .dr_rsp_o(sr_rsp), .dw_req_i(sw_req), .dw_rsp_o(sw_rsp),
    .perf_rd_bytes_o(perf_sbuf_rd_bytes_o), .perf_wr_bytes_o(perf_sbuf_wr_bytes_o));

  ncore_psum #(.Cfg(Cfg), .NumEngRd(2), .NumEngWr(2)) u_psum (
    .clk_i, .rst_ni,
    .pe_req_i(tw_req),
    .er_req_i(pr_req), .er_addr_i(pr_addr), .er_mask_i(er_mask[2:1]), .er_gnt_o(pr_gnt),
    .er_rdata_o(pr_rdata),
    .ew_req_i(pw_req), .ew_addr_i(pw_addr), .ew_mask_i(ew_mask), .ew_ben_i(ew_ben),
    .ew_wdata_i(ew_wdata), .ew_gnt_o(pw_gnt), .perf_rd_bytes_o(perf_psum_rd_bytes_o),
    .perf_wr_bytes_o(perf_psum_wr_bytes_o));

  ncore_pe #(.Cfg(Cfg)) u_pe (
    .clk_i, .rst_ni,
    .insn_valid_i(pe_valid_q), .insn_i(pe_insn_q), .ls_ready_o(pe_ls_ready_o), .mm_ready_o(pe_mm_ready_o),
    .accept_o(pe_accept_o), .ls_start_o(pe_ls_start_o), .mm_start_o(pe_mm_start_o),
    .ls_done_o(pe_ls_done_o), .mm_done_o(pe_mm_done_o), .busy_o(pe_busy),
    .sr_req_o(te_rd_req[1]), .sr_rsp_i(te_rd_rsp[1]), .mr_req_o(te_rd_req[0]), .mr_rsp_i(te_rd_rsp[0]),
    .pw_req_o(tw_req),
    .perf_macs_o(perf_pe_macs_o), .perf_busy_o(perf_pe_busy_o));

  ncore_dve #(.Cfg(Cfg)) u_dve (
    .clk_i, .rst_ni, .ce_i(dve_ce),
    .insn_valid_i(dve_valid_q), .insn_i(dve_insn_q), .insn_ready_o(dve_ready_o),
    .rd_start_o(dve_rd_start_o), .done_o(dve_done_o), .busy_o(dve_busy),
    .rd_req_o(en_rd_req[0]), .rd_rsp_i(en_rd_rsp[0]), .wr_req_o(en_wr_req[0]), .wr_rsp_i(en_wr_rsp[0]));

  ncore_act #(.Cfg(Cfg)) u_act (
    .clk_i, .rst_ni, .ce_i(act_ce),
    .insn_valid_i(act_valid_q), .insn_i(act_insn_q), .insn_ready_o(act_ready_o),
    .rd_start_o(act_rd_start_o), .done_o(act_done_o), .busy_o(act_busy),
    .rd_req_o(en_rd_req[1]), .rd_rsp_i(en_rd_rsp[1]), .wr_req_o(en_wr_req[1]), .wr_rsp_i(en_wr_rsp[1]));

  // The DMA engines' HBM ports (ncore_mem_pkg's structs) on the core's HBM ports (loose signals,
  // which the SystemC top level binds), the responses from the input registers.
  hbm_req_t hbm_req [E];
  hbm_rsp_t hbm_rsp [E];
  for (genvar e = 0; e < E; e++) begin : g_hbm
    assign {hq_valid_o[e], hq_we_o[e], hq_line_o[e], hq_ben_o[e], hq_wdata_o[e]} =
           {hbm_req[e].valid, hbm_req[e].we, HLineW'(hbm_req[e].line), hbm_req[e].wr};
    assign hbm_rsp[e] = '{credit: hq_credit_q[e], rvalid: hr_valid_q[e], rdata: hr_rdata_q[e], ack: ha_valid_q[e]};
  end

  ncore_dma #(.Cfg(Cfg)) u_dma (
    .clk_i, .rst_ni, .ce_i(dma_ce),
    .insn_valid_i(dma_valid_q), .insn_i(dma_insn_q), .q_free_o(dma_q_free_o), .rd_start_o(dma_rd_start_o),
    .done_o(dma_done_o), .busy_o(dma_busy), .perf_desc_cycles_o(perf_dma_desc_o),
    .sr_req_o(sr_req), .sr_rsp_i(sr_rsp), .sw_req_o(sw_req), .sw_rsp_i(sw_rsp), .hbm_req_o(hbm_req),
    .hbm_rsp_i(hbm_rsp));
endmodule
