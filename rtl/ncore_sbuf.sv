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
//   DMA ports (NumDma read and write, one per DMA engine; ncore_mem_pkg's line_rd_req_t ...
//     line_wr_rsp_t, of which the SBUF takes its own partitions and line address bits): one line
//     of one partition.
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
  import ncore_mem_pkg::*;
#(
  parameter int unsigned Preset   = 0,  // the preset by number, for a bench that Verilates this alone (-GPreset)
  parameter cfg_t        Cfg      = preset(Preset),
  parameter int unsigned NumEngRd = 1,
  parameter int unsigned NumEngWr = 1,
  localparam int unsigned P       = Cfg.NumPartitions,
  localparam int unsigned NumDma  = Cfg.DmaEngines,
  localparam int unsigned AddrW   = $clog2(Cfg.SbufBytes),
  localparam int unsigned Words   = Cfg.SbufBytes / 4,
  localparam int unsigned LineWords = Cfg.SbufLineBytes / 4,
  localparam int unsigned LineAddrW = AddrW - $clog2(Cfg.SbufLineBytes),
  localparam int unsigned PartW   = $clog2(P)
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
`include "ncore_mem_eng_ports.svh"
  // DMA read and write ports
  input  line_rd_req_t                  dr_req_i [NumDma],
  output line_rd_rsp_t                  dr_rsp_o [NumDma],
  input  line_wr_req_t                  dw_req_i [NumDma],
  output line_wr_rsp_t                  dw_rsp_o [NumDma],
  // performance counters (see the header)
  output logic [63:0]                   perf_rd_bytes_o,
  output logic [63:0]                   perf_wr_bytes_o
);
  localparam int unsigned Banks   = Cfg.SbufBanks;
  localparam int unsigned BankW   = (Banks > 1) ? $clog2(Banks) : 1;
  localparam int unsigned LineSh  = $clog2(Cfg.SbufLineBytes);

  // The DMA ports' structs are as wide as the largest preset (ncore_mem_pkg).
  if (PartW > MemPartW || LineAddrW > MemLineW || Cfg.SbufLineBytes != MemLineBytes) begin : g_fits
    $error("%0d partitions and %0d-byte lines do not fit ncore_mem_pkg's line ports", P, Cfg.SbufLineBytes);
  end

  function automatic logic [BankW-1:0] bank_of_line(logic [LineAddrW-1:0] line);
    bank_of_line = BankW'(line % LineAddrW'(Banks));
  endfunction

  // ---------------------------------------------------------------------------------------
  // Arbitration: reads and writes separately (1R1W banks), each side with the same scheme
  // (ncore_sbuf_arb).
  // ---------------------------------------------------------------------------------------
  logic [NumEngRd-1:0][BankW-1:0] er_bank;
  logic [NumEngWr-1:0][BankW-1:0] ew_bank;
  // What the arbiters see of the DMA ports: whether each asks, its partition, its line's bank.
  logic [NumDma-1:0]              dr_req, dr_gnt, dw_req, dw_gnt;
  logic [NumDma-1:0][PartW-1:0]   dr_part, dw_part;
  logic [NumDma-1:0][MemLineW-1:0] dr_line, dw_line;
  logic [NumDma-1:0][BankW-1:0]   dr_bank, dw_bank;

  for (genvar r = 0; r < NumEngRd; r++) begin : g_er_bank
    assign er_bank[r] = bank_of_line(LineAddrW'(er_addr_i[r] >> LineSh));
  end
  for (genvar w = 0; w < NumEngWr; w++) begin : g_ew_bank
    assign ew_bank[w] = bank_of_line(LineAddrW'(ew_addr_i[w] >> LineSh));
  end
  for (genvar d = 0; d < NumDma; d++) begin : g_dma
    assign {dr_req[d], dr_line[d]} = {dr_req_i[d].req, dr_req_i[d].addr.line};
    assign {dw_req[d], dw_line[d]} = {dw_req_i[d].req, dw_req_i[d].addr.line};
    assign {dr_part[d], dw_part[d]} = {PartW'(dr_req_i[d].addr.part), PartW'(dw_req_i[d].addr.part)};
    assign {dr_bank[d], dw_bank[d]} = {bank_of_line(LineAddrW'(dr_line[d])), bank_of_line(LineAddrW'(dw_line[d]))};
    assign dw_rsp_o[d].gnt = dw_gnt[d];
  end

  ncore_sbuf_arb #(.NumEng(NumEngRd), .NumDma(NumDma), .Banks(Banks), .P(P)) u_rd_arb (
    .clk_i, .rst_ni, .eng_req_i(er_req_i), .eng_bank_i(er_bank), .eng_mask_i(er_mask_i), .eng_gnt_o(er_gnt_o),
    .dma_req_i(dr_req), .dma_bank_i(dr_bank), .dma_part_i(dr_part), .dma_gnt_o(dr_gnt));
  ncore_sbuf_arb #(.NumEng(NumEngWr), .NumDma(NumDma), .Banks(Banks), .P(P)) u_wr_arb (
    .clk_i, .rst_ni, .eng_req_i(ew_req_i), .eng_bank_i(ew_bank), .eng_mask_i(ew_mask_i), .eng_gnt_o(ew_gnt_o),
    .dma_req_i(dw_req), .dma_bank_i(dw_bank), .dma_part_i(dw_part), .dma_gnt_o(dw_gnt));

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
    .lr_gnt_i(dr_gnt), .lr_req_i(dr_req_i), .lr_rsp_o(dr_rsp_o), .lw_gnt_i(dw_gnt), .lw_req_i(dw_req_i),
    .pw_req_i('0),
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
    `ASSERT_IF(a_dr_range, 32'(dr_line[d]) < Words / LineWords, dr_req[d],
               $sformatf("DMA read port %0d at line %0h, past the SBUF", d, dr_line[d]))
    `ASSERT_IF(a_dw_range, 32'(dw_line[d]) < Words / LineWords, dw_req[d],
               $sformatf("DMA write port %0d at line %0h, past the SBUF", d, dw_line[d]))
  end
endmodule
