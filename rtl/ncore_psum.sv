// Partial-sum buffer (PSUM): where the tensor engine's results land.
//
// Cfg.NumPartitions partitions of Cfg.PsumBytes bytes, stored as 32-bit words, in banks of
// Cfg.PsumBankBytes (bank = word / words per bank; a multiply writes within one bank). Every
// bank of every partition has one read and one write port (1R1W), as in the SBUF.
//
// Two kinds of clients:
//   the tensor engine's port (pe_req_i, ncore_mem_pkg's lane_wr_req_t: valid, acc, addr, data):
//     one fp32 word per partition per cycle, each partition with its own word address (the PE
//     array's bottom edge is skewed, so its partitions are at different places of a result).
//     acc adds the word to what is stored (fp32, round to nearest even, ncore_fp_pkg::f32_add),
//     otherwise it overwrites. Read, add and write happen in the cycle the write is presented.
//     Every PE write is taken in the cycle it is presented.
//   engine ports (NumEngRd read, NumEngWr write; the vector and the scalar engine):
//     as ncore_sbuf's engine ports: one element per lane, all lanes at the same byte address,
//     a lane mask selects partitions, read data registered (the cycle after the grant, held
//     until the port's next granted read), writes carry the element in the low bits of the
//     lane's word with byte enables (2-byte elements at byte 0 or 2).
//
// Arbitration. The tensor engine has priority: it occupies the read and the write port of every
// (partition, bank) it writes in a cycle, and an engine access that needs one of those is
// refused and retries. Two engine reads (or two engine writes) on the same bank of the same
// partition conflict, and the lower port number wins. A refused access is not granted and has
// no effect: a conflict stalls, it never corrupts. An engine read and a PE or engine write of
// the same word in one cycle (different ports) read the old word.
//
// Performance counters (the profile's psum_read_bytes and psum_write_bytes), 64 bits, cleared
// by rst_ni, counting granted accesses only:
//   tensor engine port: 4 bytes written per valid lane, accumulated or not (the accumulation's
//     read of the stored word happens inside the PSUM and is not counted as a read);
//   engine ports, as in ncore_sbuf: a granted read counts popcount(mask) x 4 bytes (the 32-bit
//     word of each lane), a granted write popcount(mask) x popcount(ben) bytes.
// They leave through perf_rd_bytes_o and perf_wr_bytes_o.
//
// This module maps accesses to banks and arbitrates them; the storage, the accesses' reads and
// writes (the accumulation too) and the counters are ncore_prim_banked_mem's (u_mem), as in the
// SBUF.
`include "ncore_assert.svh"

module ncore_psum
  import ncore_cfg_pkg::*;
  import ncore_mem_pkg::*;
#(
  parameter int unsigned  Preset   = 0,  // the preset by number, for a bench that Verilates this alone (-GPreset)
  parameter cfg_t         Cfg      = preset(Preset),
  parameter int unsigned  NumEngRd = 1,
  parameter int unsigned  NumEngWr = 1,
  localparam int unsigned P        = Cfg.NumPartitions,
  localparam int unsigned AddrW    = $clog2(Cfg.PsumBytes),      // engine byte address
  localparam int unsigned Words    = Cfg.PsumBytes / 4,
  localparam int unsigned WordW    = $clog2(Words)
) (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  // tensor engine write port
  input  lane_wr_req_t                      pe_req_i,
`include "ncore_mem_eng_ports.svh"
  // performance counters (see the header)
  output logic [63:0]                       perf_rd_bytes_o,
  output logic [63:0]                       perf_wr_bytes_o
);
  localparam int unsigned Banks     = Cfg.PsumBytes / Cfg.PsumBankBytes;
  localparam int unsigned BankW     = (Banks > 1) ? $clog2(Banks) : 1;
  localparam int unsigned BankWords = Cfg.PsumBankBytes / 4;

  // The tensor engine's port is as wide as the largest preset (ncore_mem_pkg).
  if (P > MemLanes || WordW > PsumWordW) begin : g_fits
    $error("%0d partitions and %0d word address bits do not fit ncore_mem_pkg's lane write port", P, WordW);
  end

  function automatic logic [BankW-1:0] bank_of_word(logic [WordW-1:0] w);
    bank_of_word = BankW'(w / WordW'(BankWords));
  endfunction

  // ---------------------------------------------------------------------------------------
  // Arbitration
  // ---------------------------------------------------------------------------------------
  // (bank, partition) pairs the tensor engine writes this cycle.
  logic [Banks-1:0][P-1:0] pe_busy;
  always_comb begin
    pe_busy = '0;
    if (pe_req_i.valid != '0) begin
      for (int p = 0; p < P; p++) begin
        if (pe_req_i.valid[p]) pe_busy[bank_of_word(pe_req_i.addr[PsumWordW*p +: WordW])][p] = 1'b1;
      end
    end
  end

  // Then the engine ports, reads and writes separately, the lower port number first.
  logic [NumEngRd-1:0][BankW-1:0] er_bank;
  logic [NumEngWr-1:0][BankW-1:0] ew_bank;
  logic [Banks-1:0][P-1:0]        unused_rd_busy, unused_wr_busy;
  logic [Banks-1:0]               unused_rd_conflict, unused_wr_conflict;

  for (genvar r = 0; r < NumEngRd; r++) begin : g_er_bank
    assign er_bank[r] = bank_of_word(WordW'(er_addr_i[r] >> 2));
  end
  for (genvar w = 0; w < NumEngWr; w++) begin : g_ew_bank
    assign ew_bank[w] = bank_of_word(WordW'(ew_addr_i[w] >> 2));
  end

  // (Each arbiter asserts that its grants never meet the tensor engine's writes nor each other,
  // and come only for requests.)
  ncore_prim_lane_arb #(.N(NumEngRd), .Banks(Banks), .P(P)) u_rd_arb (
    .clk_i, .rst_ni, .req_i(er_req_i), .bank_i(er_bank), .mask_i(er_mask_i), .busy_i(pe_busy), .gnt_o(er_gnt_o),
    .busy_o(unused_rd_busy), .conflict_o(unused_rd_conflict));
  ncore_prim_lane_arb #(.N(NumEngWr), .Banks(Banks), .P(P)) u_wr_arb (
    .clk_i, .rst_ni, .req_i(ew_req_i), .bank_i(ew_bank), .mask_i(ew_mask_i), .busy_i(pe_busy), .gnt_o(ew_gnt_o),
    .busy_o(unused_wr_busy), .conflict_o(unused_wr_conflict));

  // ---------------------------------------------------------------------------------------
  // The storage and its ports: the tensor engine's words (accumulated or not) and the granted
  // engine-port accesses read and write it, and count their bytes. They never meet on one bank
  // (arbitration), so the write sites never collide.
  // ---------------------------------------------------------------------------------------
  line_rd_rsp_t unused_lr_rsp [1];  // no line ports
  ncore_prim_banked_mem #(
    .P(P), .Words(Words), .AddrW(AddrW), .NumEngRd(NumEngRd), .NumEngWr(NumEngWr), .NumLine(0), .LaneWr(1'b1)
  ) u_mem (
    .clk_i, .rst_ni,
    .er_gnt_i(er_gnt_o), .er_addr_i, .er_mask_i, .er_rdata_o,
    .ew_gnt_i(ew_gnt_o), .ew_addr_i, .ew_mask_i, .ew_ben_i, .ew_wdata_i,
    .lr_gnt_i('0), .lr_req_i('{default: '0}), .lr_rsp_o(unused_lr_rsp), .lw_gnt_i('0), .lw_req_i('{default: '0}),
    .pw_req_i(pe_req_i),
    .perf_rd_bytes_o, .perf_wr_bytes_o);

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // The tensor engine's writes: overwrite and accumulate; engine accesses refused because the
  // tensor engine holds the bank, engine reads and writes granted.
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      c_pe_overwrite:  cover ((pe_req_i.valid & ~pe_req_i.acc) != '0);
      c_pe_accumulate: cover ((pe_req_i.valid & pe_req_i.acc) != '0);
      c_rd_refused:    cover ((er_req_i & ~er_gnt_o) != '0);
      c_wr_refused:    cover ((ew_req_i & ~ew_gnt_o) != '0);
      c_eng_read:      cover (er_gnt_o != '0);
      c_eng_write:     cover (ew_gnt_o != '0);
    end
  end
`endif
endmodule
