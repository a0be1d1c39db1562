// Test-bench wrapper of the vector engine (rtl/ncore_dve.sv) on the tiny preset, for the Catch2
// bench next to it: the engine on one engine read and one engine write port of an SBUF
// (rtl/ncore_sbuf.sv), as in ncore_top. The SBUF's DMA ports are on the wrapper's ports, so the
// bench can make the engine lose arbitration (reads anywhere, writes where the instruction does
// not look); the bench loads and reads the storage through u_sbuf.mem_q (public_flat_rd).
//
// Clock enable: ce_sel_i = 1 takes it from ncore_clk_en at the preset's vector-engine ratio
// (DveCeNum/DveCeDen, as ncore_top does); ce_sel_i = 0 takes ce_i from the bench, which drives
// it high for the timing tests (one engine cycle per clock) or at random. ce_o shows the enable
// the engine sees, so the bench can count engine cycles. The engine's SBUF requests and grants
// are on ports as well, for the timing checks.
module ncore_dve_tb
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
#(
  localparam cfg_t        Cfg   = CfgTiny,
  localparam int unsigned P     = Cfg.NumPartitions,
  localparam int unsigned AddrW = $clog2(Cfg.SbufBytes),
  localparam int unsigned E     = Cfg.DmaEngines,
  localparam int unsigned LineB = Cfg.SbufLineBytes,
  localparam int unsigned PartW = $clog2(P),
  localparam int unsigned SLineW = AddrW - $clog2(LineB)
) (
  input  logic   clk_i,
  input  logic   rst_ni,
  input  logic   ce_sel_i,
  input  logic   ce_i,
  output logic   ce_o,
  input  logic   insn_valid_i,
  input  insn_t  insn_i,
  output logic   insn_ready_o,
  output logic   rd_start_o,
  output logic   done_o,
  output logic   busy_o,
  output logic   rd_req_o,
  output logic   rd_psum_o,   // the bench's operands are all in SBUF: checked to stay low
  output logic   rd_gnt_o,
  output logic   wr_req_o,
  output logic   wr_psum_o,
  output logic   wr_gnt_o,
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
  output logic [E-1:0]              dw_gnt_o
);
  logic               ce_div, ce;
  logic [AddrW-1:0]   er_addr, ew_addr;
  logic [P-1:0]       er_mask, ew_mask;
  logic [3:0]         ew_ben;
  logic [P-1:0][31:0] er_rdata, ew_wdata;
  logic [E-1:0][LineB*8-1:0] unused_dr_rdata;

  ncore_clk_en #(.Num(Cfg.DveCeNum), .Den(Cfg.DveCeDen)) u_ce (.clk_i, .rst_ni, .en_o(ce_div));
  assign ce   = ce_sel_i ? ce_div : ce_i;
  assign ce_o = ce;

  ncore_sbuf #(.Cfg(Cfg), .NumEngRd(1), .NumEngWr(1)) u_sbuf (
    .clk_i, .rst_ni,
    .er_req_i(rd_req_o), .er_addr_i(er_addr), .er_mask_i(er_mask), .er_gnt_o(rd_gnt_o), .er_rdata_o(er_rdata),
    .ew_req_i(wr_req_o), .ew_addr_i(ew_addr), .ew_mask_i(ew_mask), .ew_ben_i(ew_ben), .ew_wdata_i(ew_wdata),
    .ew_gnt_o(wr_gnt_o),
    .dr_req_i, .dr_part_i, .dr_line_i, .dr_gnt_o, .dr_rdata_o(unused_dr_rdata),
    .dw_req_i, .dw_part_i, .dw_line_i, .dw_ben_i, .dw_wdata_i, .dw_gnt_o);

  ncore_dve #(.Cfg(Cfg)) u_dve (
    .clk_i, .rst_ni, .ce_i(ce),
    .insn_valid_i, .insn_i, .insn_ready_o, .rd_start_o, .done_o, .busy_o,
    .rd_req_o, .rd_psum_o, .rd_addr_o(er_addr), .rd_mask_o(er_mask), .rd_gnt_i(rd_gnt_o), .rd_data_i(er_rdata),
    .wr_req_o, .wr_psum_o, .wr_addr_o(ew_addr), .wr_mask_o(ew_mask), .wr_ben_o(ew_ben), .wr_data_o(ew_wdata),
    .wr_gnt_i(wr_gnt_o));

endmodule
