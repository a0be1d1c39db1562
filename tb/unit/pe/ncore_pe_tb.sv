// Test-bench wrapper of the tensor engine (rtl/ncore_pe.sv) for the Catch2 bench next to it and
// for the speed bench (tools/pe_speed): the engine on two engine read ports of an SBUF
// (rtl/ncore_sbuf.sv; port 0, which wins a bank conflict, the moving streamer, so that the array
// keeps streaming; port 1 the stationary loader, which has slack) and on the PE
// port of a PSUM (rtl/ncore_psum.sv), as the core will connect them. The SBUF's DMA ports and
// the PSUM's engine ports are on the wrapper's ports, so the bench can make the engine lose SBUF
// arbitration and put other engines' traffic on the PSUM banks the engine writes; the bench
// loads and reads both memories through u_sbuf.mem_q and u_psum.mem_q (public_flat_rd).
// Preset 2 (tiny) is the unit bench's; 0 (trn2) the speed bench's.
module ncore_pe_tb
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
#(
  parameter int unsigned  Preset  = 2,
  parameter int unsigned  Groups  = 2,
  localparam cfg_t        Cfg     = preset(Preset),
  localparam int unsigned P       = Cfg.NumPartitions,
  localparam int unsigned AddrW   = $clog2(Cfg.SbufBytes),
  localparam int unsigned E       = Cfg.DmaEngines,
  localparam int unsigned LineB   = Cfg.SbufLineBytes,
  localparam int unsigned PartW   = $clog2(P),
  localparam int unsigned SLineW  = AddrW - $clog2(LineB),
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
  localparam int unsigned PwAddrW = $clog2(Cfg.PsumBytes / 4);

  logic [AddrW-1:0]          sr_addr, mr_addr;
  logic [P-1:0]              sr_mask, mr_mask;
  logic [1:0][P-1:0][31:0]   er_rdata;
  logic [P-1:0][PwAddrW-1:0] pw_addr;
  logic [P-1:0][31:0]        pw_data;
  logic [P-1:0]              pw_acc;
  logic [E-1:0][LineB*8-1:0] unused_dr_rdata;
  logic                      unused_ew_gnt;

  logic [63:0]               unused_perf [6];  // the memories' and engine's counters
  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(2), .NumEngWr(1)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i({sr_req_o, mr_req_o}), .er_addr_i({sr_addr, mr_addr}), .er_mask_i({sr_mask, mr_mask}),
    .er_gnt_o({sr_gnt_o, mr_gnt_o}), .er_rdata_o(er_rdata),
    .ew_req_i(1'b0), .ew_addr_i('0), .ew_mask_i('0), .ew_ben_i('0), .ew_wdata_i('0), .ew_gnt_o(unused_ew_gnt),
    .dr_req_i, .dr_part_i, .dr_line_i, .dr_gnt_o, .dr_rdata_o(unused_dr_rdata),
    .dw_req_i, .dw_part_i, .dw_line_i, .dw_ben_i, .dw_wdata_i, .dw_gnt_o,
    .perf_rd_bytes_o(unused_perf[0]), .perf_wr_bytes_o(unused_perf[1]));

  ncore_psum #(.Cfg(Cfg), .NumEngRd(1), .NumEngWr(1)) u_psum (
    .clk_i, .rst_ni,
    .pe_valid_i(pw_valid_o), .pe_addr_i(pw_addr), .pe_data_i(pw_data), .pe_acc_i(pw_acc),
    .er_req_i(per_req_i), .er_addr_i(per_addr_i), .er_mask_i(per_mask_i), .er_gnt_o(per_gnt_o),
    .er_rdata_o(per_rdata_o),
    .ew_req_i(pew_req_i), .ew_addr_i(pew_addr_i), .ew_mask_i(pew_mask_i), .ew_ben_i(pew_ben_i),
    .ew_wdata_i(pew_wdata_i), .ew_gnt_o(pew_gnt_o),
    .perf_rd_bytes_o(unused_perf[2]), .perf_wr_bytes_o(unused_perf[3]));

  ncore_pe #(.Cfg(Cfg), .Groups(Groups)) u_pe (
    .clk_i, .rst_ni,
    .insn_valid_i, .insn_i, .ls_ready_o, .mm_ready_o, .accept_o, .ls_start_o, .mm_start_o,
    .ls_done_o, .mm_done_o, .busy_o,
    .sr_req_o, .sr_addr_o(sr_addr), .sr_mask_o(sr_mask), .sr_gnt_i(sr_gnt_o), .sr_data_i(er_rdata[1]),
    .mr_req_o, .mr_addr_o(mr_addr), .mr_mask_o(mr_mask), .mr_gnt_i(mr_gnt_o), .mr_data_i(er_rdata[0]),
    .pw_valid_o, .pw_addr_o(pw_addr), .pw_data_o(pw_data), .pw_acc_o(pw_acc),
    .perf_macs_o(unused_perf[4]), .perf_busy_o(unused_perf[5]));

endmodule
