// Storage and ports of a banked on-chip memory: the SBUF's and the PSUM's (ncore_sbuf,
// ncore_psum), which differ in their banks, their arbitration and their other clients, not in how
// a granted access reads or writes the words.
//
// P partitions of Words 32-bit words. The owner decides which accesses proceed in a cycle (its
// banks and arbiters) and hands this primitive the grants; every port here is a granted access
// (the line ports' and the lane write port's requests are ncore_mem_pkg's structs, of which the
// primitive takes its own partitions and address bits):
//   engine ports (NumEngRd read, NumEngWr write): one element per lane, all lanes at the same
//     byte address, a lane mask selecting the partitions. Reads return the 32-bit word holding
//     the element, registered: the cycle after the grant, held until the port's next granted
//     read. Writes carry the element in the low bits of each lane's word with byte enables
//     relative to the element (2-byte elements at byte 0 or 2): the word is merged, not replaced.
//   line ports (NumLine of each, the SBUF's DMA ports): one line of LineWords words of one
//     partition, read registered as the engine ports are, written merged by byte enables.
//   the lane write port (LaneWr, the PSUM's tensor engine): one word per partition, each at its
//     own word address, overwriting or (acc) accumulating: stored + data in fp32, round to nearest
//     even (ncore_fp_pkg::f32_add), read, added and written in the cycle it is presented.
// The owner's arbitration keeps the write sites of a cycle on different words.
//
// Performance counters (the profile's read and write bytes), 64 bits, cleared by rst_ni, counting
// granted accesses only: an engine read popcount(mask) x 4 bytes (the word of each lane, whatever
// the element's size), an engine write popcount(mask) x popcount(ben), a line read the whole line,
// a line write popcount(ben), a lane write 4 bytes per valid lane (an accumulation's read of the
// stored word is inside the memory and not counted).
//
// The storage is seen by the simulator through the trace interface: at time 0 the instance hands
// the array, by reference, to a DPI-C import (sim/trace/rtl_trace.cpp), which registers it under
// this instance's scope (the owner's u_mem). Simulation only: it adds no logic.
`include "ncore_assert.svh"

module ncore_prim_banked_mem
  import ncore_fp_pkg::*;
  import ncore_mem_pkg::*;
#(
  parameter int unsigned  P         = 1,
  parameter int unsigned  Words     = 1,    // per partition
  parameter int unsigned  AddrW     = 2,    // engine ports' byte address bits
  parameter int unsigned  NumEngRd  = 1,
  parameter int unsigned  NumEngWr  = 1,
  parameter int unsigned  NumLine   = 0,    // line ports (0: none)
  parameter int unsigned  LineWords = 1,
  parameter int unsigned  LineAddrW = 1,    // line address bits
  parameter bit           LaneWr    = 1'b0, // the lane write port
  localparam int unsigned WordW     = $clog2(Words),
  localparam int unsigned PartW     = (P > 1) ? $clog2(P) : 1,
  localparam int unsigned NL        = (NumLine > 0) ? NumLine : 1,
  localparam int unsigned LineW     = LineWords * 32
) (
  input  logic                             clk_i,
  input  logic                             rst_ni,
  // engine read ports (granted)
  input  logic [NumEngRd-1:0]              er_gnt_i,
  input  logic [NumEngRd-1:0][AddrW-1:0]   er_addr_i,
  input  logic [NumEngRd-1:0][P-1:0]       er_mask_i,
  output logic [NumEngRd-1:0][P-1:0][31:0] er_rdata_o,
  // engine write ports (granted)
  input  logic [NumEngWr-1:0]              ew_gnt_i,
  input  logic [NumEngWr-1:0][AddrW-1:0]   ew_addr_i,
  input  logic [NumEngWr-1:0][P-1:0]       ew_mask_i,
  input  logic [NumEngWr-1:0][3:0]         ew_ben_i,
  input  logic [NumEngWr-1:0][P-1:0][31:0] ew_wdata_i,
  // line read and write ports (NumLine of each): the grants, the requests, the read responses
  input  logic [NL-1:0]                    lr_gnt_i,
  input  line_rd_req_t                     lr_req_i [NL],
  output line_rd_rsp_t                     lr_rsp_o [NL],
  input  logic [NL-1:0]                    lw_gnt_i,
  input  line_wr_req_t                     lw_req_i [NL],
  // lane write port (LaneWr)
  input  lane_wr_req_t                     pw_req_i,
  // performance counters (see the header)
  output logic [63:0]                      perf_rd_bytes_o,
  output logic [63:0]                      perf_wr_bytes_o
);
  localparam int unsigned LineSh = $clog2(LineWords * 4);

  // The line requests' fields as this memory has them: its partitions and line address bits (the
  // rest is not read: req, which the owner arbitrated; the partitions and bits past its own).
  logic [NL-1:0][PartW-1:0]       lr_part, lw_part;
  logic [NL-1:0][LineAddrW-1:0]   lr_line, lw_line;
  logic [NL-1:0][LineWords*4-1:0] lw_ben;
  logic [NL-1:0][LineW-1:0]       lr_rdata, lw_wdata;
  for (genvar d = 0; d < NL; d++) begin : g_line
    logic unused_req;
    assign {lr_part[d], lr_line[d]} = {PartW'(lr_req_i[d].addr.part), LineAddrW'(lr_req_i[d].addr.line)};
    assign {lw_part[d], lw_line[d]} = {PartW'(lw_req_i[d].addr.part), LineAddrW'(lw_req_i[d].addr.line)};
    assign {lw_ben[d], lw_wdata[d]} = {(LineWords * 4)'(lw_req_i[d].wr.ben), LineW'(lw_req_i[d].wr.data)};
    assign lr_rsp_o[d] = '{gnt: lr_gnt_i[d], data: (MemLineBytes * 8)'(lr_rdata[d])};
    assign unused_req  = ^{lr_req_i[d], lw_req_i[d]};
  end

  /*verilator coverage_off*/  // storage: no toggle coverage (make coverage)
  logic [31:0] mem_q [P][Words];
  /*verilator coverage_on*/
`ifndef SYNTHESIS
  import "DPI-C" context function void ncore_trace_memory(input string var_name, input logic [31:0] mem [][]);
  initial ncore_trace_memory("mem_q", mem_q);
`endif

  // A word written with byte enables: the enabled bytes of data over the old word.
  function automatic logic [31:0] merge(logic [31:0] old, logic [31:0] data, logic [3:0] ben);
    logic [31:0] m;
    m = {{8{ben[3]}}, {8{ben[2]}}, {8{ben[1]}}, {8{ben[0]}}};
    merge = (old & ~m) | (data & m);
  endfunction

  // ---------------------------------------------------------------------------------------
  // Performance counters: bytes of the accesses granted this cycle (see the header)
  // ---------------------------------------------------------------------------------------
  logic [63:0] perf_rd_bytes_q;
  logic [63:0] perf_wr_bytes_q;
  logic [31:0] perf_rd_bytes, perf_wr_bytes;
  assign perf_rd_bytes_o = perf_rd_bytes_q;
  assign perf_wr_bytes_o = perf_wr_bytes_q;

  always_comb begin : p_perf
    perf_rd_bytes = '0;
    perf_wr_bytes = LaneWr ? 32'($countones(pw_req_i.valid)) * 32'd4 : '0;
    for (int r = 0; r < NumEngRd; r++) begin
      if (er_gnt_i[r]) perf_rd_bytes = perf_rd_bytes + 32'($countones(er_mask_i[r])) * 32'd4;
    end
    for (int w = 0; w < NumEngWr; w++) begin
      if (ew_gnt_i[w]) perf_wr_bytes = perf_wr_bytes + 32'($countones(ew_mask_i[w])) * 32'($countones(ew_ben_i[w]));
    end
    for (int d = 0; d < NL; d++) begin
      if (NumLine > 0 && lr_gnt_i[d]) perf_rd_bytes = perf_rd_bytes + 32'(LineWords * 4);
      if (NumLine > 0 && lw_gnt_i[d]) perf_wr_bytes = perf_wr_bytes + 32'($countones(lw_ben[d]));
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      perf_rd_bytes_q <= '0;
      perf_wr_bytes_q <= '0;
    end else begin
      perf_rd_bytes_q <= perf_rd_bytes_q + 64'(perf_rd_bytes);
      perf_wr_bytes_q <= perf_wr_bytes_q + 64'(perf_wr_bytes);
    end
  end

  // ---------------------------------------------------------------------------------------
  // Reads (registered data)
  // ---------------------------------------------------------------------------------------
  // (The line reads share the engine reads' block, as one clocked block of the SBUF's, so that
  // the two-thread model's scheduler weighs them as before: see tests/sim/check_mt_partition.py.
  // Without line ports nothing is read and lr_rdata reads 0.)
  logic [NL-1:0][LineW-1:0] lr_rdata_q;
  always_ff @(posedge clk_i) begin
    for (int r = 0; r < NumEngRd; r++) begin
      if (er_gnt_i[r]) begin
        for (int p = 0; p < P; p++) begin
          if (er_mask_i[r][p]) er_rdata_o[r][p] <= mem_q[p][WordW'(er_addr_i[r] >> 2)];
        end
      end
    end
    for (int d = 0; d < NL; d++) begin
      if (NumLine > 0 && lr_gnt_i[d]) begin
        for (int k = 0; k < LineWords; k++) begin
          lr_rdata_q[d][32*k +: 32] <= mem_q[lr_part[d]][(WordW'(lr_line[d]) << (LineSh - 2)) + WordW'(k)];
        end
      end
    end
  end
  assign lr_rdata = (NumLine > 0) ? lr_rdata_q : '0;

  // ---------------------------------------------------------------------------------------
  // Writes: per partition the lane word and the granted engine-port words, and the granted
  // lines. The owner's arbitration keeps them on different words, so the sites never collide.
  // ---------------------------------------------------------------------------------------
  for (genvar p = 0; p < P; p++) begin : g_part
    if (LaneWr) begin : g_lane
      logic [WordW-1:0] pidx;   // lane p's word, and its data
      logic [31:0]      pdata;
      assign pidx  = pw_req_i.addr[PsumWordW*p +: WordW];
      assign pdata = pw_req_i.data[32*p +: 32];
      always_ff @(posedge clk_i) begin
        if (pw_req_i.valid[p]) begin
          mem_q[p][pidx] <= pw_req_i.acc[p] ? f32_add(mem_q[p][pidx], pdata) : pdata;
        end
      end
    end
    for (genvar w = 0; w < NumEngWr; w++) begin : g_eng
      logic [WordW-1:0] widx;
      logic [1:0]       bsh;
      assign widx = WordW'(ew_addr_i[w] >> 2);
      assign bsh  = ew_addr_i[w][1:0];
      always_ff @(posedge clk_i) begin
        if (ew_gnt_i[w] && ew_mask_i[w][p]) begin
          mem_q[p][widx] <= merge(mem_q[p][widx], ew_wdata_i[w][p] << (8 * bsh), ew_ben_i[w] << bsh);
        end
      end
    end
  end

  // Lines: at most one per partition per cycle (the owner's arbitration). The loops are small
  // enough for Verilator to unroll into one write site per port and word.
  if (NumLine > 0) begin : g_line_wr
    always_ff @(posedge clk_i) begin
      for (int d = 0; d < NumLine; d++) begin
        if (lw_gnt_i[d]) begin
          for (int k = 0; k < LineWords; k++) begin
            if (lw_ben[d][4*k +: 4] != '0) begin
              mem_q[lw_part[d]][WordW'({lw_line[d], LineSh'(0)} >> 2) + WordW'(k)] <=
                  merge(mem_q[lw_part[d]][WordW'({lw_line[d], LineSh'(0)} >> 2) + WordW'(k)],
                        lw_wdata[d][32*k +: 32], lw_ben[d][4*k +: 4]);
            end
          end
        end
      end
    end
  end

  // The owner's arbitration keeps the write sites of a cycle on different words: no two engine
  // writes on one word of a partition, no two line writes on one partition.
`ifdef NCORE_ASSERT
  logic chk_eng_collide, chk_line_collide;
  always_comb begin
    chk_eng_collide = 1'b0;
    for (int a = 0; a + 1 < NumEngWr; a++) begin
      for (int b = a + 1; b < NumEngWr; b++) begin
        if (ew_gnt_i[a] && ew_gnt_i[b] && (ew_mask_i[a] & ew_mask_i[b]) != '0 && ew_addr_i[a] >> 2 == ew_addr_i[b] >> 2)
          chk_eng_collide = 1'b1;
      end
    end
  end
  if (NumLine > 1) begin : g_chk_line
    always_comb begin
      chk_line_collide = 1'b0;
      for (int a = 0; a + 1 < NumLine; a++) begin
        for (int b = a + 1; b < NumLine; b++) begin
          if (lw_gnt_i[a] && lw_gnt_i[b] && lw_part[a] == lw_part[b]) chk_line_collide = 1'b1;
        end
      end
    end
  end else begin : g_no_chk_line
    assign chk_line_collide = 1'b0;
  end
`endif
  `ASSERT_NEVER(a_eng_collide, chk_eng_collide,
                $sformatf("two engine writes granted on one word of a partition (grants %0h)", ew_gnt_i))
  `ASSERT_NEVER(a_line_collide, chk_line_collide,
                $sformatf("two line writes granted on one partition (grants %0h)", lw_gnt_i))

  // The ports a configuration leaves out (tied off by the owner).
  if (NumLine == 0) begin : g_no_line
    logic unused_line;
    assign unused_line = ^{lr_gnt_i, lr_part, lr_line, lw_gnt_i, lw_part, lw_line, lw_ben, lw_wdata};
  end
  if (!LaneWr) begin : g_no_lane
    logic unused_lane;
    assign unused_lane = ^pw_req_i;
  end
endmodule
