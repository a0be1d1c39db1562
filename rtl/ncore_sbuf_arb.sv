// One side of the SBUF's arbitration (ncore_sbuf instances one for its reads and one for its
// writes: the banks are 1R1W): engine ports, each asking for one bank in the partitions of its
// lane mask, against DMA ports, each asking for one bank of one partition.
//
// Two accesses conflict when they touch the same bank of the same partition, and two DMA ports
// also when they are on the same partition (at most one DMA port per partition per cycle). Each
// bank gives priority to one side and flips it after every cycle with a conflict on it, so
// neither side starves; within a side the lower port number wins. Engine ports on different banks
// never meet, so the ports are served in three stages:
//
//   stage 0  the DMA ports on the banks where the DMA side has priority, port 0 first;
//   engines  the engine ports (ncore_prim_lane_arb, as the PSUM's), port 0 first: on those banks
//            after the DMA ports, on the others before any;
//   stage 1  the DMA ports on the banks where the engine side has priority.
//
// A refused access is not granted and retries; a conflict stalls, it never corrupts. `conflict`
// marks the banks with a refused access this cycle (their priority flips at the clock edge).
`include "ncore_assert.svh"

module ncore_sbuf_arb #(
  parameter int unsigned  NumEng = 1,
  parameter int unsigned  NumDma = 1,
  parameter int unsigned  Banks  = 1,
  parameter int unsigned  P      = 1,
  localparam int unsigned BankW  = (Banks > 1) ? $clog2(Banks) : 1,
  localparam int unsigned PartW  = (P > 1) ? $clog2(P) : 1
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  // engine ports: a bank, the partitions of a lane mask
  input  logic [NumEng-1:0]            eng_req_i,
  input  logic [NumEng-1:0][BankW-1:0] eng_bank_i,
  input  logic [NumEng-1:0][P-1:0]     eng_mask_i,
  output logic [NumEng-1:0]            eng_gnt_o,
  // DMA ports: a bank of one partition
  input  logic [NumDma-1:0]            dma_req_i,
  input  logic [NumDma-1:0][BankW-1:0] dma_bank_i,
  input  logic [NumDma-1:0][PartW-1:0] dma_part_i,
  output logic [NumDma-1:0]            dma_gnt_o
);
  logic [Banks-1:0]        dma_first_q;  // per bank: the DMA side has priority
  logic [Banks-1:0]        conflict, eng_conflict;
  logic [Banks-1:0][P-1:0] eng_busy_in, eng_busy;

  // The DMA stages. Each takes the (bank, partition) pairs and the partitions held before it and
  // hands on what it holds after it.
  for (genvar s = 0; s < 2; s++) begin : g_dma
    logic [Banks-1:0][P-1:0] busy_in, busy;
    logic [P-1:0]            part_in, part;
    logic [NumDma-1:0]       gnt;
    logic [Banks-1:0]        refused;  // banks with a refused DMA port

    always_comb begin
      busy    = busy_in;
      part    = part_in;
      gnt     = '0;
      refused = '0;
      for (int d = 0; d < NumDma; d++) begin
        if (dma_req_i[d] && dma_first_q[dma_bank_i[d]] == (s == 0)) begin
          if (!busy[dma_bank_i[d]][dma_part_i[d]] && !part[dma_part_i[d]]) begin
            gnt[d]                             = 1'b1;
            busy[dma_bank_i[d]][dma_part_i[d]] = 1'b1;
            part[dma_part_i[d]]                = 1'b1;
          end else begin
            refused[dma_bank_i[d]] = 1'b1;
          end
        end
      end
    end
  end

  assign g_dma[0].busy_in = '0;
  assign g_dma[0].part_in = '0;
  assign eng_busy_in      = g_dma[0].busy;
  ncore_prim_lane_arb #(.N(NumEng), .Banks(Banks), .P(P)) u_eng (
    .clk_i, .rst_ni, .req_i(eng_req_i), .bank_i(eng_bank_i), .mask_i(eng_mask_i), .busy_i(eng_busy_in),
    .gnt_o(eng_gnt_o), .busy_o(eng_busy), .conflict_o(eng_conflict));
  assign g_dma[1].busy_in = eng_busy;
  assign g_dma[1].part_in = g_dma[0].part;

  assign dma_gnt_o = g_dma[0].gnt | g_dma[1].gnt;
  assign conflict  = g_dma[0].refused | eng_conflict | g_dma[1].refused;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) dma_first_q <= '0;
    else         dma_first_q <= dma_first_q ^ conflict;
  end

  logic unused_last;
  assign unused_last = ^{g_dma[1].busy, g_dma[1].part};

  // One access per (bank, partition) and one DMA port per partition per cycle, whatever the
  // grants' order: recomputed from the grants alone (two engine grants on one (bank, partition):
  // ncore_prim_lane_arb's assertion); grants only for requests.
`ifdef NCORE_ASSERT
  logic chk_overlap;
  always_comb begin
    logic [Banks-1:0][P-1:0] occ;
    logic [P-1:0]            dpart;
    occ         = '0;
    dpart       = '0;
    chk_overlap = 1'b0;
    if (eng_gnt_o != '0 || dma_gnt_o != '0) begin
      for (int d = 0; d < NumDma; d++) begin
        if (dma_gnt_o[d]) begin
          if (occ[dma_bank_i[d]][dma_part_i[d]] || dpart[dma_part_i[d]]) chk_overlap = 1'b1;
          occ[dma_bank_i[d]][dma_part_i[d]] = 1'b1;
          dpart[dma_part_i[d]]              = 1'b1;
        end
      end
      for (int e = 0; e < NumEng; e++) begin
        if (eng_gnt_o[e] && (occ[eng_bank_i[e]] & eng_mask_i[e]) != '0) chk_overlap = 1'b1;
      end
    end
  end
`endif
  `ASSERT_NEVER(a_one_access, chk_overlap,
                $sformatf("two accesses granted on one bank of one partition (engine grants %0h, DMA grants %0h)",
                          eng_gnt_o, dma_gnt_o))
  `ASSERT(a_gnt_req, (eng_gnt_o & ~eng_req_i) == '0 && (dma_gnt_o & ~dma_req_i) == '0, "grant without a request")

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // Bank conflicts: DMA against DMA (a partition or a bank), an engine port refused, a DMA port
  // refused after the engines; the priority flipped to the DMA side.
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      c_dma_vs_dma:   cover (g_dma[0].refused != '0);
      c_eng_refused:  cover (eng_conflict != '0);
      c_dma_vs_eng:   cover (g_dma[1].refused != '0);
      c_dma_priority: cover (dma_first_q != '0 && (eng_req_i & ~eng_gnt_o) != '0);
    end
  end
`endif
endmodule
