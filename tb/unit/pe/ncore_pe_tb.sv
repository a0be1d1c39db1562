// Test-bench wrapper of the tensor engine (rtl/ncore_pe.sv) for the Catch2 bench next to it and
// for the speed bench (tools/pe_speed): the engine on two engine read ports of an SBUF
// (rtl/ncore_sbuf.sv; port 0, which wins a bank conflict, the moving streamer, so that the array
// keeps streaming; port 1 the stationary loader, which has slack) and on the PE
// port of a PSUM (rtl/ncore_psum.sv), as the core will connect them. The SBUF's DMA ports and
// the PSUM's engine ports are on the wrapper's ports, so the bench can make the engine lose SBUF
// arbitration and put other engines' traffic on the PSUM banks the engine writes; the bench
// loads and reads both memories through u_sbuf.mem_q and u_psum.mem_q (public_flat_rd). The
// SBUF's DMA ports are ncore_mem_pkg's structs (the Verilated model's ports, one per struct).
// Preset 2 (tiny) is the unit bench's; 0 (trn2) the speed bench's.
module ncore_pe_tb
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_mem_pkg::*;
#(
  parameter int unsigned  Preset  = 2,
  parameter int unsigned  Groups  = 2,
  localparam cfg_t        Cfg     = preset(Preset),
  localparam int unsigned P       = Cfg.NumPartitions,
  localparam int unsigned AddrW   = $clog2(Cfg.SbufBytes),
  localparam int unsigned E       = Cfg.DmaEngines,
  localparam int unsigned PAddrW  = $clog2(Cfg.PsumBytes)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      insn_valid_i,
  input  insn_t                     insn_i,
  output logic                      ls_ready_o,
  output logic                      mm_ready_o,
  output logic                      accept_o,
  output logic                      ls_start_o,
  output logic                      mm_start_o,
  output logic                      ls_done_o,
  output logic                      mm_done_o,
  output logic                      busy_o,
  // the engine's SBUF requests and grants, and its PSUM writes, for the timing checks
  output logic                      sr_req_o,
  output logic                      sr_gnt_o,
  output logic                      mr_req_o,
  output logic                      mr_gnt_o,
  output logic [P-1:0]              pw_valid_o,
  // the SBUF's DMA ports: other traffic
  input  line_rd_req_t              dr_req_i [E],
  output line_rd_rsp_t              dr_rsp_o [E],
  input  line_wr_req_t              dw_req_i [E],
  output line_wr_rsp_t              dw_rsp_o [E],
  // the PSUM's engine ports: other engines' traffic
  input  logic                      per_req_i,
  input  logic [PAddrW-1:0]         per_addr_i,
  input  logic [P-1:0]              per_mask_i,
  output logic                      per_gnt_o,
  output logic [P-1:0][31:0]        per_rdata_o,
  input  logic                      pew_req_i,
  input  logic [PAddrW-1:0]         pew_addr_i,
  input  logic [P-1:0]              pew_mask_i,
  input  logic [3:0]                pew_ben_i,
  input  logic [P-1:0][31:0]        pew_wdata_i,
  output logic                      pew_gnt_o
);
  // the engine's SBUF reads (ncore_mem_pkg's structs): [0] stationary, [1] moving; its PSUM writes
  eng_rd_req_t               te_rd_req [2];
  eng_rd_rsp_t               te_rd_rsp [2];
  lane_wr_req_t              pw_req;
  logic [1:0][P-1:0][31:0]   er_rdata;
  logic                      unused_ew_gnt;

  assign {sr_req_o, mr_req_o} = {te_rd_req[0].req, te_rd_req[1].req};
  for (genvar t = 0; t < 2; t++) begin : g_te
    assign te_rd_rsp[t] = '{gnt: t == 0 ? sr_gnt_o : mr_gnt_o, data: (MemLanes * 32)'(er_rdata[1 - t])};
  end
  assign pw_valid_o = P'(pw_req.valid);

  logic [63:0]               unused_perf [6];  // the memories' and engine's counters
  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(2), .NumEngWr(1)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i({sr_req_o, mr_req_o}), .er_addr_i({AddrW'(te_rd_req[0].addr), AddrW'(te_rd_req[1].addr)}),
    .er_mask_i({P'(te_rd_req[0].mask), P'(te_rd_req[1].mask)}),
    .er_gnt_o({sr_gnt_o, mr_gnt_o}), .er_rdata_o(er_rdata),
    .ew_req_i(1'b0), .ew_addr_i('0), .ew_mask_i('0), .ew_ben_i('0), .ew_wdata_i('0), .ew_gnt_o(unused_ew_gnt),
    .dr_req_i, .dr_rsp_o, .dw_req_i, .dw_rsp_o,
    .perf_rd_bytes_o(unused_perf[0]), .perf_wr_bytes_o(unused_perf[1]));

  ncore_psum #(.Cfg(Cfg), .NumEngRd(1), .NumEngWr(1)) u_psum (
    .clk_i, .rst_ni,
    .pe_req_i(pw_req),
    .er_req_i(per_req_i), .er_addr_i(per_addr_i), .er_mask_i(per_mask_i), .er_gnt_o(per_gnt_o),
    .er_rdata_o(per_rdata_o),
    .ew_req_i(pew_req_i), .ew_addr_i(pew_addr_i), .ew_mask_i(pew_mask_i), .ew_ben_i(pew_ben_i),
    .ew_wdata_i(pew_wdata_i), .ew_gnt_o(pew_gnt_o),
    .perf_rd_bytes_o(unused_perf[2]), .perf_wr_bytes_o(unused_perf[3]));

  ncore_pe #(.Cfg(Cfg), .Groups(Groups)) u_pe (
    .clk_i, .rst_ni,
    .insn_valid_i, .insn_i, .ls_ready_o, .mm_ready_o, .accept_o, .ls_start_o, .mm_start_o,
    .ls_done_o, .mm_done_o, .busy_o,
    .sr_req_o(te_rd_req[0]), .sr_rsp_i(te_rd_rsp[0]), .mr_req_o(te_rd_req[1]), .mr_rsp_i(te_rd_rsp[1]),
    .pw_req_o(pw_req),
    .perf_macs_o(unused_perf[4]), .perf_busy_o(unused_perf[5]));

endmodule
