// DMA block: the queue slots and Cfg.DmaEngines DMA engines.
//
// Each of the Cfg.DmaQueues queues holds at most one dma_copy at a time (its sequencer,
// outside the RTL, serialises a queue's transfers and pays the documented per-transfer fixed
// cost before handing one over). Every engine works on its share of every queue's transfer
// (ncore_dma_engine) and pulses done for it; when all engines are done the slot frees. The
// done pulses go out per queue and per engine because the instruction's semaphore update
// fires once per engine: a transfer raises its semaphore by Cfg.DmaEngines.
//
//   sequencer --insn--> [slot q] --(q, rows)--> engine 0 .. engine E-1 --done[q][e]-->
//                          ^---- APs on request ----'   |  SBUF DMA port |  HBM port
//
// A new transfer is broadcast to the engines as (queue, SBUF-side start partition,
// partition count), from which each works out its rows; an engine reads the transfer's
// access patterns from the slot, through its own registered read port, when it starts a row.
`include "ncore_assert.svh"

module ncore_dma
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_mem_pkg::*;
#(
  parameter cfg_t         Cfg    = CfgTrn2,
  localparam int unsigned Q      = Cfg.DmaQueues,
  localparam int unsigned E      = Cfg.DmaEngines
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      ce_i,
  // instruction interface
  input  logic                      insn_valid_i,
  input  insn_t                     insn_i,
  output logic [Q-1:0]              q_free_o,     // slot q can take a transfer
  output logic [Q-1:0]              rd_start_o,   // pulse: queue q's transfer starts reading
  output logic [Q-1:0][E-1:0]       done_o,       // pulse: engine e finished queue q's share
  output logic                      busy_o,
  // performance counter, cleared by rst_ni: clock cycles in which some engine generated a
  // descriptor
  output logic [63:0]               perf_desc_cycles_o,
  // SBUF DMA ports (a line read and a line write port) and HBM ports, one of each per engine
  // (ncore_mem_pkg)
  output line_rd_req_t              sr_req_o [E],
  input  line_rd_rsp_t              sr_rsp_i [E],
  output line_wr_req_t              sw_req_o [E],
  input  line_wr_rsp_t              sw_rsp_i [E],
  output hbm_req_t                  hbm_req_o [E],
  input  hbm_rsp_t                  hbm_rsp_i [E]
);
  localparam int unsigned QW = (Q > 1) ? $clog2(Q) : 1;

  logic [Q-1:0]         valid_q;
  ap_t                  dst_q [Q];
  ap_t                  src_q [Q];
  logic [Q-1:0][E-1:0]  seen_q;       // engines done with the current transfer
  logic [E-1:0][Q-1:0]  eng_done;
  logic [E-1:0]         eng_busy;
  logic [E-1:0]         eng_desc;
  // broadcast of a new transfer
  logic                 new_q;
  logic [QW-1:0]        new_qid_q;
  logic [7:0]           new_sp_q, new_np_q;

  assign q_free_o = ~valid_q;
  // An engine's done pulse still has to reach seen_q/done_o: not idle until it has.
  assign busy_o   = |eng_busy || eng_done != '0 || new_q;

  for (genvar e = 0; e < E; e++) begin : g_eng
    logic       ap_req;
    logic [QW-1:0] ap_req_q;
    ap_t        ap_src_q, ap_dst_q;  // this engine's read port on the slots

    always_ff @(posedge clk_i) begin
      if (ap_req) begin
        ap_src_q <= src_q[ap_req_q];
        ap_dst_q <= dst_q[ap_req_q];
      end
    end

    ncore_dma_engine #(.Cfg(Cfg)) u_eng (
      .clk_i, .rst_ni, .ce_i, .engine_id_i(8'(e)),
      .new_i(new_q), .new_q_i(new_qid_q), .new_sp_i(new_sp_q), .new_np_i(new_np_q),
      .ap_req_o(ap_req), .ap_req_q_o(ap_req_q), .ap_src_i(ap_src_q), .ap_dst_i(ap_dst_q),
      .done_o(eng_done[e]), .busy_o(eng_busy[e]), .desc_o(eng_desc[e]),
      .sr_req_o(sr_req_o[e]), .sr_rsp_i(sr_rsp_i[e]), .sw_req_o(sw_req_o[e]), .sw_rsp_i(sw_rsp_i[e]),
      .hbm_req_o(hbm_req_o[e]), .hbm_rsp_i(hbm_rsp_i[e]));
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) perf_desc_cycles_o <= '0;
    else if (eng_desc != '0) perf_desc_cycles_o <= perf_desc_cycles_o + 64'd1;
  end

  // Slot contents: loaded when a transfer arrives (not reset: read only while valid).
  always_ff @(posedge clk_i) begin
    if (insn_valid_i && !valid_q[QW'(insn_i.dma_queue)]) begin
      dst_q[QW'(insn_i.dma_queue)] <= insn_i.dst;
      src_q[QW'(insn_i.dma_queue)] <= insn_i.src0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q    <= '0;
      seen_q     <= '0;
      done_o     <= '0;
      rd_start_o <= '0;
      new_q      <= 1'b0;
      new_qid_q  <= '0;
      new_sp_q   <= '0;
      new_np_q   <= '0;
    end else begin
      if (rd_start_o != '0) rd_start_o <= '0;
      new_q <= 1'b0;
      if (eng_done != '0 || done_o != '0) begin
        for (int q = 0; q < Q; q++) begin
          logic [E-1:0] now;
          for (int e = 0; e < E; e++) now[e] = eng_done[e][q];
          done_o[q] <= now;
          if (valid_q[q]) begin
            if ((seen_q[q] | now) == '1) begin
              valid_q[q] <= 1'b0;
              seen_q[q]  <= '0;
            end else begin
              seen_q[q] <= seen_q[q] | now;
            end
          end
        end
      end
      if (insn_valid_i && !valid_q[QW'(insn_i.dma_queue)]) begin
        valid_q[QW'(insn_i.dma_queue)]    <= 1'b1;
        rd_start_o[QW'(insn_i.dma_queue)] <= 1'b1;
        new_q     <= 1'b1;
        new_qid_q <= QW'(insn_i.dma_queue);
        new_sp_q  <= (insn_i.dst.mem != BUF_HBM) ? insn_i.dst.start_part :
                     (insn_i.src0.mem != BUF_HBM) ? insn_i.src0.start_part : 8'd0;
        new_np_q  <= insn_i.dst.num_part;
      end
    end
  end

  // A transfer is handed over only to a free queue slot (it would be dropped otherwise); each
  // engine completes its share of a transfer exactly once.
`ifdef NCORE_ASSERT
  logic chk_done_bad;  // an engine's done for a queue with no transfer, or a second one
  always_comb begin
    chk_done_bad = 1'b0;
    if (eng_done != '0) begin
      for (int q = 0; q < Q; q++) begin
        for (int e = 0; e < E; e++) begin
          if (eng_done[e][q] && (!valid_q[q] || seen_q[q][e])) chk_done_bad = 1'b1;
        end
      end
    end
  end
`endif
  `ASSERT_WIDE(a_slot_free, !insn_valid_i || !valid_q[QW'(insn_i.dma_queue)],
               $sformatf("transfer handed to queue %0d while its slot is busy", insn_i.dma_queue))
  `ASSERT_NEVER(a_done_once, chk_done_bad,
                $sformatf("engine done for a queue with no transfer or a second time (slots %0h)", valid_q))

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // Queue use and back-pressure: a transfer on each queue, transfers overlapping on several
  // queues, every slot taken.
  // (Bins are written out one per label: Verilator's coverage file merges the instances of a
  // generate loop into one point.)
  logic [3:0] cov_q;
  assign cov_q = insn_i.dma_queue;
  always_ff @(posedge clk_i) begin
    if (rst_ni && insn_valid_i) begin
      c_queue0: cover (cov_q == 4'd0);
      c_queue1: cover (Q > 1 && cov_q == 4'd1);
      c_queue2: cover (Q > 2 && cov_q == 4'd2);
      c_queue3: cover (Q > 3 && cov_q == 4'd3);
      c_queue4: cover (Q > 4 && cov_q == 4'd4);
      c_queue5: cover (Q > 5 && cov_q == 4'd5);
      c_queue6: cover (Q > 6 && cov_q == 4'd6);
      c_queue7: cover (Q > 7 && cov_q == 4'd7);
      c_queue8: cover (Q > 8 && cov_q == 4'd8);
      c_queue9: cover (Q > 9 && cov_q == 4'd9);
      c_queue10: cover (Q > 10 && cov_q == 4'd10);
      c_queue11: cover (Q > 11 && cov_q == 4'd11);
      c_queue12: cover (Q > 12 && cov_q == 4'd12);
      c_queue13: cover (Q > 13 && cov_q == 4'd13);
      c_queue14: cover (Q > 14 && cov_q == 4'd14);
      c_queue15: cover (Q > 15 && cov_q == 4'd15);
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      c_overlap:   cover (insn_valid_i && valid_q != '0);
      c_all_slots: cover (valid_q == '1);
    end
  end
`endif
endmodule
