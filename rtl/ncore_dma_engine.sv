// One DMA engine.
//
// A dma_copy is split over the engines by partition: engine e moves the rows (partition
// rows of the transfer) whose SBUF partition lies in [e*PPE, (e+1)*PPE), PPE = partitions per
// engine (8 of 128 with 16 engines). Each queue holds at most one transfer at a time; the
// engine serves the queues with work round-robin, one row at a time, and raises done for a
// queue once every row of its share has been written (also when the share is empty, as the
// hardware's per-engine semaphore write does).
//
// Before a row's data moves, the engine spends Cfg.DmaDescCycles DMA cycles generating its
// descriptor (R_DESC): the per-descriptor cost that makes transfers of many short rows slow.
//
// Per DMA clock the engine moves one chunk: the longest run of elements that is contiguous
// on both sides, does not cross a line (16 B) on either side and is at most a line of the
// wider dtype. Equal dtypes copy bytes; different dtypes convert each element through fp32.
//
//   issue:  chunk -> read request (HBM line, or SBUF line of one partition)
//           -> entry pushed into the in-flight FIFO (Cfg.DmaOutstanding deep)
//   fill:   SBUF data (next cycle) or HBM response (in order) lands in its entry
//   write:  oldest entry with data -> convert/shift -> write (SBUF line or HBM line)
//           an HBM write counts as done when its acknowledgement returns
//
// Writes in flight are counted per queue; reads of later chunks run ahead of them, which
// hides HBM latency. Only the HBM request port is shared between reads and writes; writes
// go first so the FIFO drains.
//
// The engine learns of a new transfer from a one-cycle broadcast (queue, SBUF-side start
// partition, partition count), works out its rows from that, and fetches the transfer's two
// access patterns from the DMA block only when it starts one of its rows.
`include "ncore_assert.svh"

module ncore_dma_engine
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_fp_pkg::*;
  import ncore_ap_pkg::*;
  import ncore_mem_pkg::*;
#(
  parameter cfg_t         Cfg      = CfgTrn2,
  localparam int unsigned Q        = Cfg.DmaQueues,
  localparam int unsigned QW       = (Q > 1) ? $clog2(Q) : 1,
  localparam int unsigned P        = Cfg.NumPartitions,
  localparam int unsigned PartW    = $clog2(P),
  localparam int unsigned SAddrW   = $clog2(Cfg.SbufBytes),
  localparam int unsigned LineB    = Cfg.SbufLineBytes,
  localparam int unsigned LineW    = LineB * 8,
  localparam int unsigned LineSh   = $clog2(LineB),
  localparam int unsigned SLineW   = SAddrW - LineSh,
  localparam int unsigned HAddrW   = Cfg.HbmAddrBits,
  localparam int unsigned CrW      = $clog2(Cfg.DmaHbmCredits + 1),
  localparam int unsigned HLineW   = HAddrW - LineSh
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   ce_i,
  // which engine this is (a constant per instance: a port rather than a parameter so that
  // every engine is the same module, compiled once)
  input  logic [7:0]             engine_id_i,
  // new transfers (one-cycle broadcast from ncore_dma)
  input  logic                   new_i,
  input  logic [QW-1:0]          new_q_i,
  input  logic [7:0]             new_sp_i,     // first partition of the SBUF side (0 for HBM->HBM)
  input  logic [7:0]             new_np_i,     // partition rows of the transfer
  // access patterns of a queue's transfer: requested here, valid the next cycle, held
  output logic                   ap_req_o,
  output logic [QW-1:0]          ap_req_q_o,
  input  ap_t                    ap_src_i,
  input  ap_t                    ap_dst_i,
  output logic [Q-1:0]           done_o,       // pulse: this engine's share of queue q is done
  output logic                   busy_o,
  output logic                   desc_o,       // generating a row's descriptor (R_DESC)
  // SBUF DMA port: a line read port and a line write port (ncore_mem_pkg)
  output line_rd_req_t           sr_req_o,
  input  line_rd_rsp_t           sr_rsp_i,
  output line_wr_req_t           sw_req_o,
  input  line_wr_rsp_t           sw_rsp_i,
  // HBM port (ncore_mem_pkg): line requests, in-order read responses and write
  // acknowledgements. A request needs a credit; the HBM side hands credits out at its bandwidth
  // and accepts every request sent with one, so no ready signal crosses back combinationally.
  output hbm_req_t               hbm_req_o,
  input  hbm_rsp_t               hbm_rsp_i
);
  localparam int unsigned PPE    = P / Cfg.DmaEngines;
  localparam int unsigned Depth  = Cfg.DmaOutstanding;
  localparam int unsigned IdxW   = $clog2(Depth);
  localparam int unsigned CntW   = IdxW + 2;
  localparam int unsigned MaxK   = LineB;         // elements per chunk at most (1-byte dtypes)
  localparam int unsigned KW     = $clog2(MaxK + 1);
  localparam int unsigned DescW  = (Cfg.DmaDescCycles > 1) ? $clog2(Cfg.DmaDescCycles + 1) : 1;

  // The ports' structs are as wide as the largest preset (ncore_mem_pkg).
  if (PartW > MemPartW || SLineW > MemLineW || HLineW > HbmLineW || LineB != MemLineBytes) begin : g_fits
    $error("%0d partitions, %0d SBUF and %0d HBM line address bits, %0d-byte lines do not fit ncore_mem_pkg's ports",
           P, SLineW, HLineW, LineB);
  end

  // ---------------------------------------------------------------------------------------
  // State (_q registers, _d their next values)
  // ---------------------------------------------------------------------------------------
  // Per queue: this engine's share of the queue's transfer.
  logic [Q-1:0]           own_q, own_d;          // this engine owes queue q a done for its transfer
  logic [Q-1:0][7:0]      row_q, row_d;          // next row (relative partition) to move
  logic [Q-1:0][7:0]      row_end_q, row_end_d;
  logic [Q-1:0][CntW-1:0] pend_q, pend_d;        // chunks issued and not yet written
  logic [Q-1:0]           done_d;
  // The row being moved (its queue, its row, its elements not yet issued) and the row state
  // machine (R_FETCH: its access patterns are on ap_*_i; R_DESC: its descriptor is being
  // generated; R_RUN: its chunks are issued).
  typedef enum logic [1:0] {R_IDLE, R_FETCH, R_DESC, R_RUN} rstate_e;
  typedef struct packed {
    logic [QW-1:0] q;
    logic [7:0]    row;                          // relative partition
    logic [31:0]   left;
  } cur_t;
  cur_t             cur_q, cur_d;
  rstate_e          rs_q, rs_d;
  logic [DescW-1:0] desc_q, desc_d;              // descriptor cycles left (R_DESC)
  logic [QW-1:0]    rr_q, rr_d;                  // round-robin pointer
  // The fields of the current row's patterns the issue stage needs (the address generators
  // hold the rest), loaded in R_FETCH.
  logic [PartW-1:0] s_part_q, d_part_q;
  buffer_e          s_mem_q, d_mem_q;
  dtype_e           s_dt_q, d_dt_q;
  logic             s_unit_q, d_unit_q;          // innermost stride is 1 element
  logic             act_q;
  // The in-flight FIFO's pointers and counts, HBM credits.
  logic [Depth-1:0] have_q, have_d;              // data has arrived
  logic [IdxW-1:0]  head_q, head_d, tail_q, tail_d;
  logic [CntW-1:0]  count_q, count_d;
  logic [IdxW-1:0]  hf_head_q, hf_head_d, hf_tail_q, hf_tail_d;  // entries waiting for HBM data
  logic [IdxW-1:0]  wa_head_q, wa_head_d, wa_tail_q, wa_tail_d;  // HBM writes awaiting their ack
  logic [CntW-1:0]  wa_count_q, wa_count_d;
  logic             sfill_q, sfill_d;            // SBUF read granted last DMA cycle: its data is on sr_rsp_i now
  logic [IdxW-1:0]  sfill_idx_q, sfill_idx_d;
  logic [CrW-1:0]   credit_q, credit_d;          // HBM credits held, at most DmaHbmCredits
  logic             hq_ok;                       // a credit is available this cycle

  assign act_q = rs_q == R_RUN;
  assign hq_ok = credit_q != '0;

  // Rows [lo, hi) of a transfer that fall on this engine's partitions.
  logic [8:0] sh_lo, sh_hi, own_lo, own_hi;
  always_comb begin : p_share
    own_lo = 9'(32'(engine_id_i) * PPE);
    own_hi = 9'((32'(engine_id_i) + 1) * PPE);
    sh_lo = (own_lo > 9'(new_sp_i)) ? own_lo - 9'(new_sp_i) : 9'd0;
    sh_hi = (own_hi > 9'(new_sp_i)) ? own_hi - 9'(new_sp_i) : 9'd0;
    if (sh_hi > 9'(new_np_i)) sh_hi = 9'(new_np_i);
    if (sh_lo > sh_hi) sh_lo = sh_hi;
  end

  // ---------------------------------------------------------------------------------------
  // Rows: pick a queue (round-robin), fetch its access patterns, issue the row's chunks
  // ---------------------------------------------------------------------------------------
  logic [Q-1:0]  has_rows;
  logic          pick_valid;
  logic [QW-1:0] pick_q, pick_i;
  always_comb begin : p_pick
    pick_i     = '0;
    pick_valid = 1'b0;
    pick_q     = '0;
    has_rows   = '0;
    if (own_q != '0) for (int k = 0; k < Q; k++) has_rows[k] = own_q[k] && row_q[k] < row_end_q[k];
    if (rs_q == R_IDLE && has_rows != '0) begin
      for (int i = 1; i <= Q; i++) begin
        pick_i = QW'((32'(rr_q) + i) % Q);
        if (!pick_valid && has_rows[pick_i]) begin
          pick_valid = 1'b1;
          pick_q     = pick_i;
        end
      end
    end
  end

  assign ap_req_o   = ce_i && pick_valid;
  assign ap_req_q_o = pick_q;

  // A row's first address on each side: SBUF and PSUM rows start at the pattern's offset (their
  // partition is the row's), HBM rows part_stride elements apart.
  logic signed [HAddrW-1:0] s_row_off, d_row_off;
  logic [HAddrW-1:0]        s_row_base, d_row_base;
  assign s_row_off  = HAddrW'($signed(ap_src_i.part_stride)) * HAddrW'(cur_q.row);
  assign d_row_off  = HAddrW'($signed(ap_dst_i.part_stride)) * HAddrW'(cur_q.row);
  assign s_row_base = HAddrW'(ap_src_i.offset) +
                      ((ap_src_i.mem == BUF_HBM) ? HAddrW'(s_row_off <<< ap_esz_log2(ap_src_i.dtype)) : '0);
  assign d_row_base = HAddrW'(ap_dst_i.offset) +
                      ((ap_dst_i.mem == BUF_HBM) ? HAddrW'(d_row_off <<< ap_esz_log2(ap_dst_i.dtype)) : '0);

  logic             it_init;
  logic             it_step;
  logic [4:0]       it_n;
  logic [HAddrW-1:0] s_addr, d_addr;
  logic [31:0]      s_rem0, d_rem0;
  logic             unused_s_last, unused_d_last;

  ncore_ap_iter #(.AddrW(HAddrW)) u_it_s (
    .clk_i, .rst_ni, .init_i(it_init), .base_i(s_row_base),
    .esz_log2_i(ap_esz_log2(ap_src_i.dtype)), .size_i(ap_src_i.size), .stride_i(ap_src_i.stride),
    .step_i(it_step), .step_n_i(it_n), .addr_o(s_addr), .rem0_o(s_rem0), .last_o(unused_s_last));
  ncore_ap_iter #(.AddrW(HAddrW)) u_it_d (
    .clk_i, .rst_ni, .init_i(it_init), .base_i(d_row_base),
    .esz_log2_i(ap_esz_log2(ap_dst_i.dtype)), .size_i(ap_dst_i.size), .stride_i(ap_dst_i.stride),
    .step_i(it_step), .step_n_i(it_n), .addr_o(d_addr), .rem0_o(d_rem0), .last_o(unused_d_last));

  // ---------------------------------------------------------------------------------------
  // Chunk of the active row
  // ---------------------------------------------------------------------------------------
  logic [KW-1:0] k;
  logic [31:0]   ks, kd, kk;
  logic [31:0]   s_room, d_room;  // bytes to the end of the line
  always_comb begin : p_chunk
    k      = KW'(1);
    ks     = '0;
    kd     = '0;
    kk     = '0;
    s_room = '0;
    d_room = '0;
    if (act_q) begin  // only an engine issuing a row needs it
      s_room = 32'(LineB) - 32'(s_addr[LineSh-1:0]);
      d_room = 32'(LineB) - 32'(d_addr[LineSh-1:0]);
      ks = s_unit_q ? (s_room >> ap_esz_log2(s_dt_q)) : 32'd1;
      kd = d_unit_q ? (d_room >> ap_esz_log2(d_dt_q)) : 32'd1;
      if (ks > s_rem0) ks = s_rem0;
      if (kd > d_rem0) kd = d_rem0;
      kk = (ks < kd) ? ks : kd;
      if (kk > cur_q.left) kk = cur_q.left;
      if (kk == 0) kk = 1;
      k = KW'(kk);
    end
  end

  // ---------------------------------------------------------------------------------------
  // In-flight FIFO
  // ---------------------------------------------------------------------------------------
  typedef struct packed {
    logic [QW-1:0]     q;
    logic              dst_hbm;
    logic [PartW-1:0]  d_part;
    logic [HLineW-1:0] d_line;
    logic [LineSh-1:0] s_off;
    logic [LineSh-1:0] d_off;
    logic [KW-1:0]     k;
    dtype_e            s_dt;
    dtype_e            d_dt;
  } entry_t;

  /*verilator coverage_off*/  // storage: no toggle coverage (make coverage)
  entry_t           ent_q  [Depth];
  logic [LineW-1:0] data_q [Depth];
  logic [IdxW-1:0]  hfill_q [Depth];  // entries waiting for HBM read data, in request order
  logic [QW-1:0]    wack_q [Depth];   // queues of HBM writes waiting for their acknowledgement, in order
  /*verilator coverage_on*/

  // ---------------------------------------------------------------------------------------
  // Write stage: the oldest entry, once its data is in, converted and shifted to its place
  // ---------------------------------------------------------------------------------------
  entry_t           h;
  logic [LineW-1:0] h_src;
  logic [LineW-1:0] w_data;
  logic [LineB-1:0] w_ben;
  logic             w_want, w_fire;
  logic [5:0]       w_nbytes;
  logic [31:0]      w_raw, w_v;
  logic [LineSh:0]  w_so, w_dof;

  assign h     = ent_q[head_q];
  assign h_src = data_q[head_q];

  always_comb begin : p_cast
    w_nbytes = '0;
    w_raw    = '0;
    w_v      = '0;
    w_so     = '0;
    w_dof    = '0;
    w_data   = '0;
    w_ben    = '0;
    if (w_want) begin
      if (h.s_dt == h.d_dt) begin
        w_nbytes = 6'(h.k) * 6'(dtype_bytes(h.s_dt));
        w_data   = (h_src >> (8 * h.s_off)) << (8 * h.d_off);
        w_ben    = LineB'(((1 << w_nbytes) - 1) << h.d_off);
      end else begin
        // The h.k elements of the line, one after the other. (For Verilator the bound is not a
        // constant, on purpose: it then keeps one loop body, where unrolled copies made each
        // engine's write path look heavier than a PE column group to the two-thread model's
        // scheduler, which then placed both groups on one thread. Yosys unrolls every loop and
        // needs a constant bound: the same loop for synthesis, the elements past h.k skipped.)
`ifdef SYNTHESIS
        for (int i = 0; i < MaxK; i++) if (KW'(i) < h.k) begin
`else
        for (int i = 0; i < MaxK && KW'(i) < h.k; i++) begin
`endif
          w_so   = (LineSh + 1)'(h.s_off) + (LineSh + 1)'(i * dtype_bytes(h.s_dt));
          w_dof  = (LineSh + 1)'(h.d_off) + (LineSh + 1)'(i * dtype_bytes(h.d_dt));
          w_raw  = elem_bits(32'(h_src >> (8 * w_so)), h.s_dt);
          w_v    = fp_from_f32(fp_to_f32(w_raw, h.s_dt), h.d_dt);  // upper bits zero
          w_data = w_data | (LineW'(w_v) << (8 * w_dof));
          w_ben  = w_ben | (LineB'(ap_elem_ben(h.d_dt)) << w_dof);
        end
      end
    end
  end

  assign w_want = ce_i && count_q != 0 && have_q[head_q];

  assign sw_req_o = '{req: w_want && !h.dst_hbm,
                     addr: '{part: MemPartW'(h.d_part), line: MemLineW'(SLineW'(h.d_line))},
                     wr: '{ben: w_ben, data: w_data}};

  logic hq_write;
  assign hq_write = w_want && h.dst_hbm && wa_count_q != CntW'(Depth);
  assign w_fire   = h.dst_hbm ? (hq_write && hq_ok) : (sw_req_o.req && sw_rsp_i.gnt);

  // ---------------------------------------------------------------------------------------
  // Issue stage: the active row's next chunk, a read of its source line
  // ---------------------------------------------------------------------------------------
  logic   i_want, i_fire, i_hbm, hq_read;
  entry_t i_ent;  // what the write stage needs of the chunk
  assign i_hbm   = s_mem_q == BUF_HBM;
  assign i_want  = ce_i && act_q && count_q != CntW'(Depth);
  assign sr_req_o = '{req: i_want && !i_hbm,
                     addr: '{part: MemPartW'(s_part_q), line: MemLineW'(SLineW'(s_addr >> LineSh))}};
  assign hq_read  = i_want && i_hbm && !hq_write;
  assign i_fire   = i_hbm ? (hq_read && hq_ok) : (sr_req_o.req && sr_rsp_i.gnt);

  // A refused SBUF read or write (the write stage's, above) is presented again, unchanged, in the
  // next enabled cycle (the write compared in a 1-bit signal: it is wider than a concurrent
  // assertion of Verilator 5.006 can sample).
`ifdef NCORE_ASSERT
  logic         chk_sr_q, chk_sw_q;  // an SBUF read, an SBUF write refused in the last enabled cycle
  line_rd_req_t chk_sr_req_q;        // ... the requests
  line_wr_req_t chk_sw_req_q;
  logic         chk_sw_same;         // the write presented is the one refused
  assign chk_sw_same = sw_req_o == chk_sw_req_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      {chk_sr_q, chk_sw_q, chk_sr_req_q, chk_sw_req_q} <= '0;
    end else if (ce_i) begin
      {chk_sr_q, chk_sw_q} <= {sr_req_o.req && !sr_rsp_i.gnt, sw_req_o.req && !sw_rsp_i.gnt};
      {chk_sr_req_q, chk_sw_req_q} <= {sr_req_o, sw_req_o};
    end
  end
`endif
  `ASSERT_IF(a_sr_held, sr_req_o == chk_sr_req_q, ce_i && chk_sr_q,
             $sformatf("refused SBUF read (partition %0d, line %0h) not held", chk_sr_req_q.addr.part,
                       chk_sr_req_q.addr.line))
  `ASSERT_IF(a_sw_held, chk_sw_same, ce_i && chk_sw_q,
             $sformatf("refused SBUF write (partition %0d, line %0h) not held", chk_sw_req_q.addr.part,
                       chk_sw_req_q.addr.line))

  assign i_ent.q       = cur_q.q;
  assign i_ent.dst_hbm = d_mem_q == BUF_HBM;
  assign i_ent.d_part  = d_part_q;
  assign i_ent.d_line  = HLineW'(d_addr >> LineSh);
  assign i_ent.s_off   = s_addr[LineSh-1:0];
  assign i_ent.d_off   = d_addr[LineSh-1:0];
  assign i_ent.k       = k;
  assign i_ent.s_dt    = s_dt_q;
  assign i_ent.d_dt    = d_dt_q;

  assign hbm_req_o = '{valid: (hq_write || hq_read) && hq_ok, we: hq_write,
                      line: HbmLineW'(hq_write ? h.d_line : HLineW'(s_addr >> LineSh)),
                      wr: '{ben: w_ben, data: w_data}};

  assign it_init = ce_i && rs_q == R_FETCH;
  assign it_step = i_fire;
  assign it_n    = 5'(k);

  // Queue whose share is complete this cycle.
  logic [Q-1:0] fin_now;
  always_comb begin : p_fin
    fin_now = '0;
    if ((own_q & ~has_rows) != '0) begin
      for (int q = 0; q < Q; q++) begin
        fin_now[q] = own_q[q] && !has_rows[q] && !(rs_q != R_IDLE && 32'(cur_q.q) == q) && pend_q[q] == '0;
      end
    end
  end

  assign desc_o = rs_q == R_DESC;
  assign busy_o = rs_q != R_IDLE || has_rows != '0 || fin_now != '0 || new_i ||
                  (count_q != 0 && have_q[head_q]) || sfill_q;

  // ---------------------------------------------------------------------------------------
  // The row state machine
  // ---------------------------------------------------------------------------------------
  always_comb begin : p_row_fsm
    rs_d      = rs_q;
    desc_d    = desc_q;
    cur_d     = cur_q;
    rr_d      = rr_q;
    if (ce_i) begin
      unique case (rs_q)
        R_IDLE: begin
          if (pick_valid) begin  // patterns requested this cycle (ap_req_o)
            rs_d      = R_FETCH;
            cur_d.q   = pick_q;
            rr_d      = pick_q;
            cur_d.row = row_q[pick_q];
          end
        end
        R_FETCH: begin           // patterns on ap_*_i: the address generators load
          rs_d       = (Cfg.DmaDescCycles != 0) ? R_DESC : R_RUN;
          desc_d     = DescW'(Cfg.DmaDescCycles);
          cur_d.left = ap_elems(ap_dst_i.size);
        end
        R_DESC: begin            // the row's descriptor is being generated
          desc_d = desc_q - 1'b1;
          if (desc_q == DescW'(1)) rs_d = R_RUN;
        end
        R_RUN: begin             // chunks issued; the row ends with its last
          if (i_fire) begin
            cur_d.left = cur_q.left - 32'(k);
            if (cur_q.left == 32'(k)) rs_d = R_IDLE;
          end
        end
        default: ;
      endcase
    end
  end

  // The row's pattern fields, loaded in R_FETCH.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      s_part_q <= '0;
      d_part_q <= '0;
      s_mem_q  <= BUF_HBM;
      d_mem_q  <= BUF_HBM;
      s_dt_q   <= DT_FP32;
      d_dt_q   <= DT_FP32;
      s_unit_q <= 1'b0;
      d_unit_q <= 1'b0;
    end else if (it_init) begin
      s_part_q <= PartW'(ap_src_i.start_part + cur_q.row);
      d_part_q <= PartW'(ap_dst_i.start_part + cur_q.row);
      s_mem_q  <= ap_src_i.mem;
      d_mem_q  <= ap_dst_i.mem;
      s_dt_q   <= ap_src_i.dtype;
      d_dt_q   <= ap_dst_i.dtype;
      s_unit_q <= $signed(ap_src_i.stride[0]) == 1;
      d_unit_q <= $signed(ap_dst_i.stride[0]) == 1;
    end
  end

  // ---------------------------------------------------------------------------------------
  // The queues' shares: rows left, chunks in flight, dones owed
  // ---------------------------------------------------------------------------------------
  logic [Q-1:0] pend_inc, pend_dec;
  always_comb begin : p_pend
    pend_inc = '0;
    pend_dec = '0;
    if (i_fire) pend_inc[cur_q.q] = 1'b1;
    if (w_fire && !h.dst_hbm) pend_dec[h.q] = 1'b1;
    if (hbm_rsp_i.ack && wa_count_q != 0) pend_dec[wack_q[wa_head_q]] = 1'b1;
  end

  // The loops run only when there is something for them to do: an idle engine must cost next to
  // nothing per cycle.
  always_comb begin : p_queues
    own_d     = own_q;
    row_d     = row_q;
    row_end_d = row_end_q;
    pend_d    = pend_q;
    done_d    = '0;
    // Owed dones: set by a new transfer, cleared as they are signalled (one update, so the two
    // cannot overwrite each other in the same cycle).
    if (new_i || (ce_i && fin_now != '0)) begin
      own_d = (own_q & ~(ce_i ? fin_now : '0)) | (new_i ? Q'(1) << new_q_i : '0);
    end
    if (ce_i) done_d = fin_now;
    // A new transfer: the rows of it on this engine's partitions (maybe none).
    if (new_i) begin
      row_d[new_q_i]     = sh_lo[7:0];
      row_end_d[new_q_i] = sh_hi[7:0];
    end
    if (ce_i && rs_q == R_IDLE && pick_valid) row_d[pick_q] = row_q[pick_q] + 1;
    if ((pend_inc | pend_dec) != '0) begin
      for (int q = 0; q < Q; q++) pend_d[q] = pend_q[q] + CntW'(pend_inc[q]) - CntW'(pend_dec[q]);
    end
  end

  // Per-queue chunk counts never go below zero; a queue's done is owed at most once per transfer
  // and pulsed only once it is no longer owed.
`ifdef NCORE_ASSERT
  logic chk_pend_under;  // a queue's chunk count would go below zero
  always_comb begin
    chk_pend_under = 1'b0;
    for (int q = 0; q < Q; q++) if (pend_dec[q] && !pend_inc[q] && pend_q[q] == '0) chk_pend_under = 1'b1;
  end
`endif
  `ASSERT_NEVER(a_pend, chk_pend_under,
                $sformatf("a queue's chunks-in-flight count went below zero (queues written %0h)", pend_dec))
  `ASSERT_IF(a_new_owed, !own_q[new_q_i], new_i,
             $sformatf("new transfer on queue %0d while this engine still owes its done", new_q_i))
  `ASSERT_IF(a_done_owed, (done_o & own_q) == '0, done_o != '0,
             $sformatf("done pulse for queues %0h whose share is still owed", done_o & own_q))

  // ---------------------------------------------------------------------------------------
  // The FIFO's pointers: issue pushes, SBUF data (the DMA cycle after the grant) and HBM data
  // (in order, on any cycle) fill, the write stage pops; HBM writes wait for their
  // acknowledgements, which arrive on any cycle and are taken at once (their entries were
  // reserved when the requests were issued). The HBM side keeps an engine's credits at
  // DmaHbmCredits or fewer (the counter's range); a credit arriving in the cycle one is spent is
  // counted, not dropped.
  // ---------------------------------------------------------------------------------------
  logic ack;  // an HBM write acknowledged
  assign ack = hbm_rsp_i.ack && wa_count_q != 0;

  always_comb begin : p_fifo
    have_d      = have_q;
    head_d      = head_q;
    tail_d      = tail_q;
    count_d     = count_q;
    hf_head_d   = hf_head_q;
    hf_tail_d   = hf_tail_q;
    sfill_d     = sfill_q;
    sfill_idx_d = sfill_idx_q;
    if (ce_i) begin
      if (i_fire) begin
        have_d[tail_q] = 1'b0;
        tail_d         = tail_q + 1;
        if (i_hbm) hf_tail_d = hf_tail_q + 1;
      end
      if (sfill_q) have_d[sfill_idx_q] = 1'b1;
      sfill_d     = i_fire && !i_hbm;
      sfill_idx_d = tail_q;
      if (w_fire) head_d = head_q + 1;
      count_d = count_q + CntW'(i_fire) - CntW'(w_fire);
    end
    if (hbm_rsp_i.rvalid) begin
      have_d[hfill_q[hf_head_q]] = 1'b1;
      hf_head_d                  = hf_head_q + 1;
    end
  end

  assign wa_tail_d  = (w_fire && h.dst_hbm) ? wa_tail_q + 1 : wa_tail_q;
  assign wa_head_d  = ack ? wa_head_q + 1 : wa_head_q;
  assign wa_count_d = wa_count_q + CntW'(w_fire && h.dst_hbm) - CntW'(ack);
  assign credit_d   = credit_q + CrW'(hbm_rsp_i.credit) - CrW'(hbm_req_o.valid);

  // HBM credits: never more than DmaHbmCredits held, a request only with one. The in-flight
  // FIFO: no push when full, no pop when empty, the counts within its depth; HBM read data and
  // write acknowledgements only for requests in flight.
`ifdef NCORE_ASSERT
  logic [CntW-1:0] chk_hr_q;  // HBM reads issued, data not yet returned
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) chk_hr_q <= '0;
    else         chk_hr_q <= chk_hr_q + CntW'(ce_i && i_fire && i_hbm) - CntW'(hbm_rsp_i.rvalid);
  end
`endif
  `ASSERT(a_credit_max, credit_q <= CrW'(Cfg.DmaHbmCredits),
          $sformatf("%0d HBM credits held, more than DmaHbmCredits = %0d", credit_q, Cfg.DmaHbmCredits))
  `ASSERT_IF(a_credit_spent, credit_q != '0, hbm_req_o.valid, "HBM request without a credit")
  `ASSERT(a_fifo_count, count_q <= CntW'(Depth) && wa_count_q <= CntW'(Depth) && chk_hr_q <= count_q,
          $sformatf("FIFO counters out of range: %0d entries, %0d writes awaiting ack, %0d reads awaiting data (depth %0d)",
                    count_q, wa_count_q, chk_hr_q, Depth))
  `ASSERT_IF(a_fifo_push, count_q != CntW'(Depth), ce_i && i_fire, "chunk issued into a full FIFO")
  `ASSERT_IF(a_fifo_pop, count_q != '0 && have_q[head_q], ce_i && w_fire, "chunk written from an empty FIFO entry")
  `ASSERT_IF(a_hbm_rdata, chk_hr_q != '0, hbm_rsp_i.rvalid, "HBM read data with no read in flight")
  `ASSERT_IF(a_hbm_ack, wa_count_q != '0, hbm_rsp_i.ack, "HBM write acknowledgement with no write in flight")

  // The FIFO's storage: an issued chunk's entry, its data as it arrives, the order of HBM reads
  // and of HBM writes.
  always_ff @(posedge clk_i) begin
    if (i_fire) begin
      ent_q[tail_q] <= i_ent;
      if (i_hbm) hfill_q[hf_tail_q] <= tail_q;
    end
    if (ce_i && sfill_q) data_q[sfill_idx_q] <= sr_rsp_i.data;
    if (w_fire && h.dst_hbm) wack_q[wa_tail_q] <= h.q;
    if (hbm_rsp_i.rvalid) data_q[hfill_q[hf_head_q]] <= hbm_rsp_i.rdata;
  end

  // ---------------------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------------------
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      own_q       <= '0;
      row_q       <= '0;
      row_end_q   <= '0;
      pend_q      <= '0;
      done_o      <= '0;
      rs_q        <= R_IDLE;
      desc_q      <= '0;
      cur_q       <= '0;
      rr_q        <= QW'(Q - 1);
      have_q      <= '0;
      head_q      <= '0;
      tail_q      <= '0;
      count_q     <= '0;
      hf_head_q   <= '0;
      hf_tail_q   <= '0;
      wa_head_q   <= '0;
      wa_tail_q   <= '0;
      wa_count_q  <= '0;
      sfill_q     <= 1'b0;
      sfill_idx_q <= '0;
      credit_q    <= '0;
    end else begin
      own_q       <= own_d;
      row_q       <= row_d;
      row_end_q   <= row_end_d;
      pend_q      <= pend_d;
      done_o      <= done_d;
      rs_q        <= rs_d;
      desc_q      <= desc_d;
      cur_q       <= cur_d;
      rr_q        <= rr_d;
      have_q      <= have_d;
      head_q      <= head_d;
      tail_q      <= tail_d;
      count_q     <= count_d;
      hf_head_q   <= hf_head_d;
      hf_tail_q   <= hf_tail_d;
      wa_head_q   <= wa_head_d;
      wa_tail_q   <= wa_tail_d;
      wa_count_q  <= wa_count_d;
      sfill_q     <= sfill_d;
      sfill_idx_q <= sfill_idx_d;
      credit_q    <= credit_d;
    end
  end

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // Casts (source x destination dtype), directions (HBM/SBUF on each side), and what holds an
  // engine back: a full in-flight FIFO, no HBM credit, writes awaiting acknowledgement, refused
  // SBUF ports, descriptor generation; several queues sharing the engine; empty shares.
  // (Bins are written out one per label: Verilator's coverage file merges the instances of a
  // generate loop into one point.)
  always_ff @(posedge clk_i) begin
    if (rst_ni && ce_i && rs_q == R_FETCH) begin
      `COVER_DTYPES(c_cast_fp32, ap_src_i.dtype == DT_FP32, ap_dst_i.dtype)
      `COVER_DTYPES(c_cast_bf16, ap_src_i.dtype == DT_BF16, ap_dst_i.dtype)
      `COVER_DTYPES(c_cast_fp16, ap_src_i.dtype == DT_FP16, ap_dst_i.dtype)
      // the integer dtypes: bit copies of 1-byte elements, and conversions from and to them
      c_copy_1byte:     cover (dtype_bytes(ap_src_i.dtype) == 3'd1 && ap_dst_i.dtype == ap_src_i.dtype);
      c_cast_from_int:  cover (ap_src_i.dtype >= DT_INT8 && ap_dst_i.dtype != ap_src_i.dtype);
      c_cast_to_int:    cover (ap_dst_i.dtype >= DT_INT8 && ap_dst_i.dtype != ap_src_i.dtype);
      c_hbm_to_hbm: cover (ap_src_i.mem == BUF_HBM && ap_dst_i.mem == BUF_HBM);
      c_hbm_to_sbuf: cover (ap_src_i.mem == BUF_HBM && ap_dst_i.mem == BUF_SBUF);
      c_sbuf_to_hbm: cover (ap_src_i.mem == BUF_SBUF && ap_dst_i.mem == BUF_HBM);
      c_sbuf_to_sbuf: cover (ap_src_i.mem == BUF_SBUF && ap_dst_i.mem == BUF_SBUF);
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_ni && ce_i) begin
      c_fifo_full:   cover (act_q && count_q == CntW'(Depth));
      c_no_credit:   cover ((act_q && i_hbm && count_q != CntW'(Depth) && !hq_write && !hq_ok) ||
                            (w_want && h.dst_hbm && !hq_ok));
      c_ack_full:    cover (w_want && h.dst_hbm && wa_count_q == CntW'(Depth));
      c_sr_refused:  cover (sr_req_o.req && !sr_rsp_i.gnt);
      c_sw_refused:  cover (sw_req_o.req && !sw_rsp_i.gnt);
      c_rd_behind_wr: cover (i_want && i_hbm && hq_write);
      c_desc:        cover (rs_q == R_DESC);
      c_queues_shared: cover ($countones(has_rows) > 1);
    end
    if (rst_ni && new_i) c_empty_share: cover (sh_lo == sh_hi);
  end
`endif
endmodule
