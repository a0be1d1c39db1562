// State buffer (SBUF): the core's on-chip scratchpad.
//
// Cfg.NumPartitions partitions of Cfg.SbufBytes bytes, stored as 32-bit words. Within a
// partition the bytes are grouped in lines of Cfg.SbufLineBytes, and lines are interleaved
// over Cfg.SbufBanks banks (bank = line mod banks). Every bank of every partition has one
// read and one write port (1R1W).
//
// Two kinds of clients:
//   engine ports (NumEngRd read, NumEngWr write): one element per lane per cycle, all lanes at
//     the same byte address, one lane per partition, a lane mask selects the partitions.
//     Reads return the 32-bit word holding the element; writes carry the element in the low
//     bits of each lane's word and a byte enable.
//   DMA ports (NumDma read and write, one per DMA engine): one line of one partition.
// Read data is registered: it appears the cycle after the grant and holds until the port's
// next granted read.
//
// Arbitration (ncore_sbuf_arb, one for the reads and one for the writes): two reads (or two
// writes) that touch the same bank of the same partition in one cycle conflict, and at most one
// DMA port may read (write) a given partition per cycle. The loser is not granted and retries; a
// conflict stalls, it never corrupts. Between the engine side and the DMA side the priority flips
// after every conflict on a bank, so neither side starves; within a side, the lower port number
// wins.
//
// Performance counters (the profile's sbuf_read_bytes and sbuf_write_bytes), 64 bits, cleared
// by rst_ni, counting granted accesses only (a refused access retries and is counted once, when
// granted):
//   DMA ports: a granted line read counts the whole line (SbufLineBytes = 16), a granted line
//     write popcount(ben) bytes;
//   engine ports: a granted read counts popcount(mask) x 4 bytes (the SRAM delivers the 32-bit
//     word holding each lane's element, whatever the element's size), a granted write
//     popcount(mask) x popcount(ben) bytes.
// They leave through perf_rd_bytes_o and perf_wr_bytes_o.
module ncore_sbuf
  import ncore_cfg_pkg::*;
#(
  parameter int unsigned Preset   = 0,  // the preset by number, for a bench that Verilates this alone (-GPreset)
  parameter cfg_t        Cfg      = preset(Preset),
  parameter int unsigned NumEngRd = 1,
  parameter int unsigned NumEngWr = 1,
  localparam int unsigned P       = Cfg.NumPartitions,
  localparam int unsigned NumDma  = Cfg.DmaEngines,
  localparam int unsigned AddrW   = $clog2(Cfg.SbufBytes),
  localparam int unsigned Words   = Cfg.SbufBytes / 4,
  localparam int unsigned LineW   = Cfg.SbufLineBytes * 8,
  localparam int unsigned LineWords = Cfg.SbufLineBytes / 4,
  localparam int unsigned LineAddrW = AddrW - $clog2(Cfg.SbufLineBytes),
  localparam int unsigned PartW   = $clog2(P)
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  // engine read ports
  input  logic [NumEngRd-1:0]           er_req_i,
  input  logic [NumEngRd-1:0][AddrW-1:0] er_addr_i,
  input  logic [NumEngRd-1:0][P-1:0]    er_mask_i,
  output logic [NumEngRd-1:0]           er_gnt_o,
  output logic [NumEngRd-1:0][P-1:0][31:0] er_rdata_o,
  // engine write ports
  input  logic [NumEngWr-1:0]           ew_req_i,
  input  logic [NumEngWr-1:0][AddrW-1:0] ew_addr_i,
  input  logic [NumEngWr-1:0][P-1:0]    ew_mask_i,
  input  logic [NumEngWr-1:0][3:0]      ew_ben_i,
  input  logic [NumEngWr-1:0][P-1:0][31:0] ew_wdata_i,
  output logic [NumEngWr-1:0]           ew_gnt_o,
  // DMA read ports
  input  logic [NumDma-1:0]             dr_req_i,
  input  logic [NumDma-1:0][PartW-1:0]  dr_part_i,
  input  logic [NumDma-1:0][LineAddrW-1:0] dr_line_i,
  output logic [NumDma-1:0]             dr_gnt_o,
  output logic [NumDma-1:0][LineW-1:0]  dr_rdata_o,
  // DMA write ports
  input  logic [NumDma-1:0]             dw_req_i,
  input  logic [NumDma-1:0][PartW-1:0]  dw_part_i,
  input  logic [NumDma-1:0][LineAddrW-1:0] dw_line_i,
  input  logic [NumDma-1:0][Cfg.SbufLineBytes-1:0] dw_ben_i,
  input  logic [NumDma-1:0][LineW-1:0]  dw_wdata_i,
  output logic [NumDma-1:0]             dw_gnt_o,
  // performance counters (see the header)
  output logic [63:0]                   perf_rd_bytes_o,
  output logic [63:0]                   perf_wr_bytes_o
);
  localparam int unsigned Banks   = Cfg.SbufBanks;
  localparam int unsigned BankW   = (Banks > 1) ? $clog2(Banks) : 1;
  localparam int unsigned WordW   = AddrW - 2;
  localparam int unsigned LineSh  = $clog2(Cfg.SbufLineBytes);

  // The storage. The simulator sees it through the trace interface: at time 0
  // the instance hands the array, by reference, to a DPI-C import (sim/trace/rtl_trace.cpp),
  // which registers it under this instance's scope. Simulation only: it adds no logic.
  /*verilator coverage_off*/  // storage: no toggle coverage (make coverage)
  logic [31:0] mem_q [P][Words];
  /*verilator coverage_on*/
`ifndef SYNTHESIS
  import "DPI-C" context function void ncore_trace_memory(input string var_name, input logic [31:0] mem [][]);
  initial ncore_trace_memory("mem_q", mem_q);
`endif

  function automatic logic [BankW-1:0] bank_of_line(logic [LineAddrW-1:0] line);
    return BankW'(line % LineAddrW'(Banks));
  endfunction

  // ---------------------------------------------------------------------------------------
  // Arbitration: reads and writes separately (1R1W banks), each side with the same scheme
  // (ncore_sbuf_arb).
  // ---------------------------------------------------------------------------------------
  logic [NumEngRd-1:0][BankW-1:0] er_bank;
  logic [NumEngWr-1:0][BankW-1:0] ew_bank;
  logic [NumDma-1:0][BankW-1:0]   dr_bank, dw_bank;

  for (genvar r = 0; r < NumEngRd; r++) begin : g_er_bank
    assign er_bank[r] = bank_of_line(LineAddrW'(er_addr_i[r] >> LineSh));
  end
  for (genvar w = 0; w < NumEngWr; w++) begin : g_ew_bank
    assign ew_bank[w] = bank_of_line(LineAddrW'(ew_addr_i[w] >> LineSh));
  end
  for (genvar d = 0; d < NumDma; d++) begin : g_dma_bank
    assign dr_bank[d] = bank_of_line(dr_line_i[d]);
    assign dw_bank[d] = bank_of_line(dw_line_i[d]);
  end

  ncore_sbuf_arb #(.NumEng(NumEngRd), .NumDma(NumDma), .Banks(Banks), .P(P)) u_rd_arb (
    .clk_i, .rst_ni, .eng_req_i(er_req_i), .eng_bank_i(er_bank), .eng_mask_i(er_mask_i), .eng_gnt_o(er_gnt_o),
    .dma_req_i(dr_req_i), .dma_bank_i(dr_bank), .dma_part_i(dr_part_i), .dma_gnt_o(dr_gnt_o));
  ncore_sbuf_arb #(.NumEng(NumEngWr), .NumDma(NumDma), .Banks(Banks), .P(P)) u_wr_arb (
    .clk_i, .rst_ni, .eng_req_i(ew_req_i), .eng_bank_i(ew_bank), .eng_mask_i(ew_mask_i), .eng_gnt_o(ew_gnt_o),
    .dma_req_i(dw_req_i), .dma_bank_i(dw_bank), .dma_part_i(dw_part_i), .dma_gnt_o(dw_gnt_o));

  // ---------------------------------------------------------------------------------------
  // Performance counters: bytes of the accesses granted this cycle (see the header)
  // ---------------------------------------------------------------------------------------
  logic [63:0] perf_rd_bytes_q;
  logic [63:0] perf_wr_bytes_q;
  assign perf_rd_bytes_o = perf_rd_bytes_q;
  assign perf_wr_bytes_o = perf_wr_bytes_q;
  logic [31:0] perf_rd_bytes, perf_wr_bytes;

  always_comb begin
    perf_rd_bytes = '0;
    perf_wr_bytes = '0;
    for (int r = 0; r < NumEngRd; r++) begin
      if (er_gnt_o[r]) perf_rd_bytes = perf_rd_bytes + 32'($countones(er_mask_i[r])) * 32'd4;
    end
    for (int w = 0; w < NumEngWr; w++) begin
      if (ew_gnt_o[w]) perf_wr_bytes = perf_wr_bytes + 32'($countones(ew_mask_i[w])) * 32'($countones(ew_ben_i[w]));
    end
    for (int d = 0; d < NumDma; d++) begin
      if (dr_gnt_o[d]) perf_rd_bytes = perf_rd_bytes + 32'(Cfg.SbufLineBytes);
      if (dw_gnt_o[d]) perf_wr_bytes = perf_wr_bytes + 32'($countones(dw_ben_i[d]));
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
  always_ff @(posedge clk_i) begin
    for (int r = 0; r < NumEngRd; r++) begin
      if (er_gnt_o[r]) begin
        for (int p = 0; p < P; p++) begin
          if (er_mask_i[r][p]) er_rdata_o[r][p] <= mem_q[p][WordW'(er_addr_i[r] >> 2)];
        end
      end
    end
    for (int d = 0; d < NumDma; d++) begin
      if (dr_gnt_o[d]) begin
        for (int k = 0; k < LineWords; k++) begin
          dr_rdata_o[d][32*k +: 32] <= mem_q[dr_part_i[d]][WordW'({dr_line_i[d], LineSh'(0)} >> 2) + WordW'(k)];
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------
  // Writes: the granted engine-port words of each partition, and the granted DMA lines.
  // ---------------------------------------------------------------------------------------
  function automatic logic [31:0] merge(logic [31:0] old, logic [31:0] data, logic [3:0] ben);
    logic [31:0] m;
    m = {{8{ben[3]}}, {8{ben[2]}}, {8{ben[1]}}, {8{ben[0]}}};
    return (old & ~m) | (data & m);
  endfunction

  for (genvar p = 0; p < P; p++) begin : g_part
    for (genvar w = 0; w < NumEngWr; w++) begin : g_eng
      logic [WordW-1:0] widx;
      logic [1:0]       bsh;
      assign widx = WordW'(ew_addr_i[w] >> 2);
      assign bsh  = ew_addr_i[w][1:0];
      always_ff @(posedge clk_i) begin
        if (ew_gnt_o[w] && ew_mask_i[w][p]) begin
          mem_q[p][widx] <= merge(mem_q[p][widx], ew_wdata_i[w][p] << (8 * bsh), ew_ben_i[w] << bsh);
        end
      end
    end
  end

  // DMA lines: at most one per partition per cycle (arbitration), so the sites never collide.
  // The loops are small enough for Verilator to unroll into one write site per port and word.
  always_ff @(posedge clk_i) begin
    for (int d = 0; d < NumDma; d++) begin
      if (dw_gnt_o[d]) begin
        for (int k = 0; k < LineWords; k++) begin
          if (dw_ben_i[d][4*k +: 4] != '0) begin
            mem_q[dw_part_i[d]][WordW'({dw_line_i[d], LineSh'(0)} >> 2) + WordW'(k)] <=
                merge(mem_q[dw_part_i[d]][WordW'({dw_line_i[d], LineSh'(0)} >> 2) + WordW'(k)],
                      dw_wdata_i[d][32*k +: 32], dw_ben_i[d][4*k +: 4]);
          end
        end
      end
    end
  end

endmodule
