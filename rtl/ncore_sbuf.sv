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
//
// This module maps accesses to banks and arbitrates them; the storage, the granted accesses'
// reads and writes and the counters are ncore_prim_banked_mem's (u_mem), as in the PSUM.
`include "ncore_assert.svh"

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
  localparam int unsigned LineSh  = $clog2(Cfg.SbufLineBytes);

  function automatic logic [BankW-1:0] bank_of_line(logic [LineAddrW-1:0] line);
    bank_of_line = BankW'(line % LineAddrW'(Banks));
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
  // The storage and its ports: the granted accesses read and write it, and count their bytes
  // ---------------------------------------------------------------------------------------
  ncore_prim_banked_mem #(
    .P(P), .Words(Words), .AddrW(AddrW), .NumEngRd(NumEngRd), .NumEngWr(NumEngWr), .NumLine(NumDma),
    .LineWords(LineWords), .LineAddrW(LineAddrW), .LaneWr(1'b0)
  ) u_mem (
    .clk_i, .rst_ni,
    .er_gnt_i(er_gnt_o), .er_addr_i, .er_mask_i, .er_rdata_o,
    .ew_gnt_i(ew_gnt_o), .ew_addr_i, .ew_mask_i, .ew_ben_i, .ew_wdata_i,
    .lr_gnt_i(dr_gnt_o), .lr_part_i(dr_part_i), .lr_line_i(dr_line_i), .lr_rdata_o(dr_rdata_o),
    .lw_gnt_i(dw_gnt_o), .lw_part_i(dw_part_i), .lw_line_i(dw_line_i), .lw_ben_i(dw_ben_i), .lw_wdata_i(dw_wdata_i),
    .pw_valid_i('0), .pw_addr_i('0), .pw_data_i('0), .pw_acc_i('0),
    .perf_rd_bytes_o, .perf_wr_bytes_o);

  // Every request is within the SBUF: an engine port's byte address below SbufBytes, a DMA port's
  // line below its lines (the Program's checks keep every pattern inside its buffer; a request past
  // the end would read or write nothing, a gap in the address space when SbufBytes is not a power
  // of two).
  for (genvar r = 0; r < NumEngRd; r++) begin : g_er_range
    `ASSERT_IF(a_er_range, 32'(er_addr_i[r]) < Cfg.SbufBytes, er_req_i[r],
               $sformatf("engine read port %0d at byte %0h, past the SBUF's %0d", r, er_addr_i[r], Cfg.SbufBytes))
  end
  for (genvar w = 0; w < NumEngWr; w++) begin : g_ew_range
    `ASSERT_IF(a_ew_range, 32'(ew_addr_i[w]) < Cfg.SbufBytes, ew_req_i[w],
               $sformatf("engine write port %0d at byte %0h, past the SBUF's %0d", w, ew_addr_i[w], Cfg.SbufBytes))
  end
  for (genvar d = 0; d < NumDma; d++) begin : g_dma_range
    `ASSERT_IF(a_dr_range, 32'(dr_line_i[d]) < Words / LineWords, dr_req_i[d],
               $sformatf("DMA read port %0d at line %0h, past the SBUF", d, dr_line_i[d]))
    `ASSERT_IF(a_dw_range, 32'(dw_line_i[d]) < Words / LineWords, dw_req_i[d],
               $sformatf("DMA write port %0d at line %0h, past the SBUF", d, dw_line_i[d]))
  end
endmodule
