// NeuronCore top: SBUF, vector engine, DMA block and the engines' clock enables.
//
// One clock at the master rate (the tensor engine's clock); the vector engine and the DMA
// engines advance on fractional clock enables (ncore_clk_en), so every engine keeps its
// documented rate ratio inside one clock domain and the SBUF stays single-clocked.
//
// The sequencers live outside, in the SystemC top level: each engine has an instruction
// port (valid/ready, the decoded ncore_isa_pkg::insn_t) and reports read-start and done
// pulses, from which the sequencers fire semaphore updates. HBM is outside too: the DMA
// engines reach it through one line-wide request/response port each.
//
//            insn ports                         HBM ports (x DmaEngines)
//   ----> [ dve ] ---rd/wr--> [ sbuf ] <--line-- [ dma: engines ] <----->
//   ---------------------------------------------------^
//
// Every input is registered here before any logic sees it, so nothing in the core is
// combinational from a port: the ports' protocols allow the one cycle (instruction ports
// are valid/ready with the sequencer holding off after issuing; HBM requests need a credit).
//
// `busy_o` is high when some engine will change state on its own in the next cycle; when
// it is low the RTL only waits for its ports, and the SystemC top level may skip cycles.
module ncore_top
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
#(
  parameter int unsigned  Preset = 0,
  localparam cfg_t        Cfg    = preset(Preset),
  localparam int unsigned Q      = Cfg.DmaQueues,
  localparam int unsigned E      = Cfg.DmaEngines,
  localparam int unsigned LineB  = Cfg.SbufLineBytes,
  localparam int unsigned LineW  = LineB * 8,
  localparam int unsigned HLineW = 40 - $clog2(LineB)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // vector engine instruction port
  input  logic                      dve_valid_i,
  input  insn_t                     dve_insn_i,
  output logic                      dve_ready_o,
  output logic                      dve_rd_start_o,
  output logic                      dve_done_o,
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
  output logic [1:0]                ce_o        // {dma, dve} clock enables, for monitors
);
  localparam int unsigned P      = Cfg.NumPartitions;
  localparam int unsigned PartW  = $clog2(P);
  localparam int unsigned AddrW  = $clog2(Cfg.SbufBytes);
  localparam int unsigned SLineW = AddrW - $clog2(LineB);

  logic dve_ce, dma_ce;

  // Input registers
  logic                    dve_valid_q, dma_valid_q;
  insn_t                   dve_insn_q, dma_insn_q;
  logic [E-1:0]            hq_credit_q, hr_valid_q, ha_valid_q;
  logic [E-1:0][LineW-1:0] hr_rdata_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      dve_valid_q <= 1'b0;
      dma_valid_q <= 1'b0;
      hq_credit_q <= '0;
      hr_valid_q  <= '0;
      ha_valid_q  <= '0;
    end else begin
      dve_valid_q <= dve_valid_i;
      dma_valid_q <= dma_valid_i;
      hq_credit_q <= hq_credit_i;
      hr_valid_q  <= hr_valid_i;
      ha_valid_q  <= ha_valid_i;
    end
  end

  // Payloads: loaded only with their valid, so idle cycles copy nothing.
  always_ff @(posedge clk_i) begin
    if (dve_valid_i) dve_insn_q <= dve_insn_i;
    if (dma_valid_i) dma_insn_q <= dma_insn_i;
    if (hr_valid_i != '0) hr_rdata_q <= hr_rdata_i;
  end

  ncore_clk_en #(.Num(Cfg.DveCeNum), .Den(Cfg.DveCeDen)) u_ce_dve (.clk_i, .rst_ni, .en_o(dve_ce));
  ncore_clk_en #(.Num(Cfg.DmaCeNum), .Den(Cfg.DmaCeDen)) u_ce_dma (.clk_i, .rst_ni, .en_o(dma_ce));

  assign ce_o = {dma_ce, dve_ce};

  // Engine ports into the SBUF
  logic               er_req, er_gnt, ew_req, ew_gnt;
  logic [AddrW-1:0]   er_addr, ew_addr;
  logic [P-1:0]       er_mask, ew_mask;
  logic [3:0]         ew_ben;
  logic [P-1:0][31:0] er_rdata, ew_wdata;
  // DMA ports into the SBUF
  logic [E-1:0]              sr_req, sr_gnt, sw_req, sw_gnt;
  logic [E-1:0][PartW-1:0]   sr_part, sw_part;
  logic [E-1:0][SLineW-1:0]  sr_line, sw_line;
  logic [E-1:0][LineW-1:0]   sr_rdata, sw_wdata;
  logic [E-1:0][LineB-1:0]   sw_ben;

  logic dve_busy, dma_busy;
  // The vector engine's accesses go to the SBUF; PSUM accesses are not routed yet (the
  // sequencers refuse programs with PSUM operands until the PSUM is part of the core).
  logic dve_rd_req, dve_rd_psum, dve_wr_req, dve_wr_psum;
  assign er_req = dve_rd_req && !dve_rd_psum;
  assign ew_req = dve_wr_req && !dve_wr_psum;
  // A registered instruction or HBM response not yet seen by its engine counts as busy too.
  assign busy_o = dve_busy || dma_busy || dve_valid_q || dma_valid_q || hr_valid_q != '0 || ha_valid_q != '0;

  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(1), .NumEngWr(1)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i(er_req), .er_addr_i(er_addr), .er_mask_i(er_mask), .er_gnt_o(er_gnt), .er_rdata_o(er_rdata),
    .ew_req_i(ew_req), .ew_addr_i(ew_addr), .ew_mask_i(ew_mask), .ew_ben_i(ew_ben), .ew_wdata_i(ew_wdata),
    .ew_gnt_o(ew_gnt),
    .dr_req_i(sr_req), .dr_part_i(sr_part), .dr_line_i(sr_line), .dr_gnt_o(sr_gnt), .dr_rdata_o(sr_rdata),
    .dw_req_i(sw_req), .dw_part_i(sw_part), .dw_line_i(sw_line), .dw_ben_i(sw_ben), .dw_wdata_i(sw_wdata),
    .dw_gnt_o(sw_gnt));

  ncore_dve #(.Cfg(Cfg)) u_dve (
    .clk_i, .rst_ni, .ce_i(dve_ce),
    .insn_valid_i(dve_valid_q), .insn_i(dve_insn_q), .insn_ready_o(dve_ready_o),
    .rd_start_o(dve_rd_start_o), .done_o(dve_done_o), .busy_o(dve_busy),
    .rd_req_o(dve_rd_req), .rd_psum_o(dve_rd_psum), .rd_addr_o(er_addr), .rd_mask_o(er_mask), .rd_gnt_i(er_gnt), .rd_data_i(er_rdata),
    .wr_req_o(dve_wr_req), .wr_psum_o(dve_wr_psum), .wr_addr_o(ew_addr), .wr_mask_o(ew_mask), .wr_ben_o(ew_ben), .wr_data_o(ew_wdata),
    .wr_gnt_i(ew_gnt));

  ncore_dma #(.Cfg(Cfg)) u_dma (
    .clk_i, .rst_ni, .ce_i(dma_ce),
    .insn_valid_i(dma_valid_q), .insn_i(dma_insn_q), .q_free_o(dma_q_free_o), .rd_start_o(dma_rd_start_o),
    .done_o(dma_done_o), .busy_o(dma_busy),
    .sr_req_o(sr_req), .sr_part_o(sr_part), .sr_line_o(sr_line), .sr_gnt_i(sr_gnt), .sr_rdata_i(sr_rdata),
    .sw_req_o(sw_req), .sw_part_o(sw_part), .sw_line_o(sw_line), .sw_ben_o(sw_ben), .sw_wdata_o(sw_wdata),
    .sw_gnt_i(sw_gnt),
    .hq_valid_o, .hq_credit_i(hq_credit_q), .hq_we_o, .hq_line_o, .hq_ben_o, .hq_wdata_o,
    .hr_valid_i(hr_valid_q), .hr_rdata_i(hr_rdata_q), .ha_valid_i(ha_valid_q));
endmodule
