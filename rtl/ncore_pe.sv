// Tensor engine (PE): load_stationary and multiply_moving on the PE array (ncore_pe_array).
//
// Three units work at once, fed in program order from one instruction port:
//
//   loader    load_stationary: reads the stationary operand [K partitions, M free elements]
//             from the SBUF, one column (free element j of every partition) per cycle, and
//             presents it to the array, which loads it into the weight set the multiplies do
//             not use (the shadow set).
//   streamer  multiply_moving: reads the moving operand [K partitions, N free elements], one
//             column per cycle (one per Cfg.PeFp32Passes cycles for fp32), and presents it to
//             the array tagged with the weight set, its multiply's slot and its index n. It
//             holds one multiply streaming and one waiting.
//   writer    takes the array's results off its bottom edge (column j, in the cycle after the
//             column leaves the last row) and writes them to PSUM partition dst.start + j, word
//             dst.offset / 4 + n, overwriting or (insn.acc) accumulating; one word per lane per
//             cycle, each lane with its own address (the bottom edge is skewed by a cycle per
//             column). PSUM takes every PE write in the cycle it is presented.
//
//   SBUF stationary port --> loader ---\
//                                       >--> ncore_pe_array --> writer --> PSUM port
//   SBUF moving port -----> streamer --/
//
// Each read port is an SBUF engine read port (as ncore_dve's: ncore_mem_pkg's eng_rd_req_t and
// eng_rd_rsp_t): request, byte address, lane mask, grant; data the cycle after the grant. Row k
// of both operands is partition start_part + k; 2-byte elements sit at byte 0 or 2 of their
// lane's word, 1-byte ones (fp8) at any byte. The engine converts every element
// to fp32 (ncore_fp_pkg::fp_to_f32) on its way into the array.
//
// Ordering and overlap:
//   - A multiply uses the weight set of the latest load_stationary before it. A load goes to the
//     other set, so it may run while multiplies on the current set stream; it starts only when
//     no multiply accepted before it still has columns to present on its target set. Loads and
//     moving columns travel through the array on the same wavefront (ncore_pe_array), so a
//     column presented after another sees its effect: no further draining is needed.
//   - A multiply starts streaming when the load of its set has presented its last column, when
//     the previous multiply has held the streamer for Cfg.PeMmMinCycles cycles (the documented
//     minimum initiation interval; fp32: 4 cycles per column), and when no PSUM lane would get
//     two writes in one cycle: column j of a multiply writes partition dst.start + j, so a
//     multiply whose dst.start is s higher than a still-draining one's starts s cycles later
//     (never with equal starts, the common case).
//   - done pulses: ls_done_o when a load's weights are in every PE (2P cycles after its last
//     column), mm_done_o when a multiply's last result is in PSUM; each in program order.
//
// Instruction port: the engine registers a presented instruction (insn_valid_i, one cycle)
// and takes it when its unit can (accept_o pulses the cycle after). ls_ready_o / mm_ready_o
// say that an instruction of that kind presented now is taken at once; the sequencer presents
// the next instruction only after accept_o. ls_start_o / mm_start_o pulse at an instruction's
// first granted SBUF read (for semaphore updates at read start).
//
// Timing of one multiply of N 16-bit columns (SBUF never refusing): taken at edge t, first read
// in cycle t + 1, column n presented to the array in cycle t + 3 + n, its result for column j
// on the PSUM port in cycle t + 3 + n + P + j + 2, mm_done_o in the cycle after the last
// write. The streamer takes the next multiply at once, so back-to-back multiplies keep the
// array full.
`include "ncore_assert.svh"

module ncore_pe
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_fp_pkg::*;
  import ncore_ap_pkg::*;
  import ncore_mem_pkg::*;
#(
  parameter cfg_t         Cfg     = CfgTrn2,
  parameter int unsigned  Groups  = 2,    // PE array column groups (Verilator threads)
  localparam int unsigned P       = Cfg.NumPartitions,
  localparam int unsigned AddrW   = $clog2(Cfg.SbufBytes),
  localparam int unsigned PwAddrW = $clog2(Cfg.PsumBytes / 4)
) (
  input  logic                        clk_i,
  input  logic                        rst_ni,
  // instruction port (from the tensor engine's sequencer)
  input  logic                        insn_valid_i,
  input  insn_t                       insn_i,
  output logic                        ls_ready_o,
  output logic                        mm_ready_o,
  output logic                        accept_o,
  output logic                        ls_start_o,   // pulse: a load's first SBUF read
  output logic                        mm_start_o,   // pulse: a multiply's first SBUF read
  output logic                        ls_done_o,    // pulse: a load's weights are in the array
  output logic                        mm_done_o,    // pulse: a multiply's results are in PSUM
  output logic                        busy_o,
  // SBUF engine read ports: the stationary operand's, the moving operand's
  output eng_rd_req_t                 sr_req_o,
  input  eng_rd_rsp_t                 sr_rsp_i,
  output eng_rd_req_t                 mr_req_o,
  input  eng_rd_rsp_t                 mr_rsp_i,
  // PSUM write port: one word per partition, each with its own word address
  output lane_wr_req_t                pw_req_o,
  // performance counters (see below)
  output logic [63:0]                 perf_macs_o,
  output logic [63:0]                 perf_busy_o
);
  localparam int unsigned ColW   = $clog2(P);
  localparam int unsigned NW     = $clog2(Cfg.PsumBankBytes / 4);  // moving column index bits
  localparam int unsigned Slots  = 8;                               // multiplies in flight
  localparam int unsigned SlotW  = $clog2(Slots);
  localparam int unsigned TagW   = SlotW + NW;
  localparam int unsigned Passes = Cfg.PeFp32Passes;
  localparam int unsigned LsdW   = 2 * P;                           // load drain, cycles

  // The read ports' structs are as wide as the largest preset (ncore_mem_pkg).
  if (P > MemLanes || AddrW > MemAddrW || PwAddrW > PsumWordW) begin : g_fits
    $error("%0d lanes and %0d address bits do not fit ncore_mem_pkg's ports (%0d, %0d)", P, AddrW, MemLanes,
           MemAddrW);
  end

  // ---------------------------------------------------------------------------------------
  // Helpers
  // ---------------------------------------------------------------------------------------
  function automatic logic [P-1:0] low_mask(logic [7:0] num);
    logic [P-1:0] m;
    for (int p = 0; p < P; p++) m[p] = 32'(p) < 32'(num);
    low_mask = m;
  endfunction

  // Row k's element (fp32 bits) from the lane of partition start + k; zero for rows >= K.
  function automatic logic [P-1:0][31:0] to_rows(logic [P-1:0][31:0] data, logic [7:0] start,
                                                 logic [P-1:0] rows, logic [1:0] boff, dtype_e dt);
    logic [P-1:0][31:0] r;
    logic [31:0] raw;
    for (int k = 0; k < P; k++) begin
      r[k] = '0;
      if (rows[k]) begin
        raw = ap_elem_of_word(data[ColW'(32'(start) + 32'(k))], boff, dt);
        r[k] = fp_to_f32(raw, dt);
      end
    end
    to_rows = r;
  endfunction

  // ---------------------------------------------------------------------------------------
  // Instruction intake: an instruction is taken in the cycle it is presented when its unit can
  // take it, otherwise it is held until it can.
  // ---------------------------------------------------------------------------------------
  logic   hold_v_q;
  insn_t  hold_q;
  insn_t  cur;                          // the instruction presented or held
  logic   cur_v, cur_ls;
  logic   ls_can, mm_can, take_ls, take_mm;

  assign cur        = hold_v_q ? hold_q : insn_i;
  assign cur_v      = hold_v_q || insn_valid_i;
  assign cur_ls     = cur.opcode == OP_LOAD_STATIONARY;
  assign take_ls    = cur_v && cur_ls && ls_can;
  assign take_mm    = cur_v && !cur_ls && mm_can;
  assign ls_ready_o = !hold_v_q && ls_can;
  assign mm_ready_o = !hold_v_q && mm_can;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hold_v_q <= 1'b0;
      accept_o <= 1'b0;
    end else begin
      accept_o <= take_ls || take_mm;
      hold_v_q <= cur_v && !take_ls && !take_mm;
    end
  end

  always_ff @(posedge clk_i) begin
    if (insn_valid_i && !hold_v_q) hold_q <= insn_i;
  end

  // The sequencer presents an instruction only after the previous one's accept (an instruction
  // presented while one is held would be lost).
  `ASSERT_WIDE(a_no_overrun, !insn_valid_i || !hold_v_q,
               $sformatf("instruction (opcode %0d) presented while another is held", insn_i.opcode))

  // ---------------------------------------------------------------------------------------
  // Weight sets
  // ---------------------------------------------------------------------------------------
  logic             cur_set_q;          // set of the latest load taken (multiplies use it)
  logic [1:0][ColW:0] set_m_q;          // its stationary's column count M, per set
  logic [1:0][1:0]  mm_cnt_q;           // multiplies taken, not yet fully read, per set
  logic             mm_last_rd;         // the streaming multiply's last read is granted now
  logic             ma_set_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cur_set_q <= 1'b0;
      set_m_q   <= '0;
      mm_cnt_q  <= '0;
    end else begin
      if (take_ls) begin
        cur_set_q          <= !cur_set_q;
        set_m_q[!cur_set_q] <= (ColW + 1)'(ap_elems(cur.src0.size));
      end
      for (int s = 0; s < 2; s++) begin
        mm_cnt_q[s] <= mm_cnt_q[s] + 2'((take_mm && cur_set_q == 1'(s)) ? 1 : 0)
                                   - 2'((mm_last_rd && ma_set_q == 1'(s)) ? 1 : 0);
      end
    end
  end

  `ASSERT_IF(a_set_count, mm_cnt_q[ma_set_q] != '0, mm_last_rd,
             $sformatf("weight set %0d's multiply count goes below zero", ma_set_q))

  // ---------------------------------------------------------------------------------------
  // Loader
  // ---------------------------------------------------------------------------------------
  logic             ld_act_q;           // issuing reads
  logic             ld_set_q;
  logic [31:0]      ld_m_q, ld_rd_q;    // columns, reads granted
  logic [P-1:0]     ld_rows_q;
  logic [7:0]       ld_start_q;
  dtype_e           ld_dt_q;
  logic             ld_first_q;
  // column on the read port (the cycle after its grant)
  logic             ldd_v_q, ldd_last_q, ldd_set_q;
  logic [1:0]       ldd_boff_q;       // the element's byte in its word
  logic [ColW-1:0]  ldd_col_q;
  logic [P-1:0]     ldd_rows_q;
  logic [7:0]       ldd_start_q;
  dtype_e           ldd_dt_q;
  // column presented to the array
  logic               ldp_v_q, ldp_last_q, ldp_set_q;
  logic [ColW-1:0]    ldp_col_q;
  logic [P-1:0][31:0] ldp_data_q;
  logic [LsdW-1:0]    lsd_q;            // load drain: a last column presented i + 1 cycles ago
  logic [AddrW-1:0]   ld_addr;
  logic               ld_fire, ld_last;  // a read granted; the load's last
  logic [31:0]        unused_ld_rem0;
  logic               unused_ld_last;

  // A load may start when the loader is free and no multiply taken before it still has
  // columns to present on the set it overwrites.
  assign ld_last = ld_fire && ld_rd_q + 1 == ld_m_q;
  assign ls_can  = (!ld_act_q || ld_last) &&
                   mm_cnt_q[!cur_set_q] == 2'((mm_last_rd && ma_set_q == !cur_set_q) ? 1 : 0);
  assign ld_fire = ld_act_q && sr_rsp_i.gnt;

  assign sr_req_o = '{req: ld_act_q, psum: 1'b0, addr: MemAddrW'(ld_addr),
                     mask: MemLanes'(P'(ld_rows_q << ld_start_q))};

  ncore_ap_iter #(.AddrW(AddrW)) u_it_ld (
    .clk_i, .rst_ni, .init_i(take_ls), .base_i(AddrW'(cur.src0.offset)),
    .esz_log2_i(ap_esz_log2(cur.src0.dtype)), .size_i(cur.src0.size), .stride_i(cur.src0.stride),
    .step_i(ld_fire), .step_n_i(5'd1), .addr_o(ld_addr), .rem0_o(unused_ld_rem0), .last_o(unused_ld_last));

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ld_act_q   <= 1'b0;
      ld_first_q <= 1'b0;
      ldd_v_q    <= 1'b0;
      ldp_v_q    <= 1'b0;
      lsd_q      <= '0;
      ls_start_o <= 1'b0;
      ls_done_o  <= 1'b0;
    end else begin
      ls_start_o <= 1'b0;
      if (take_ls) begin
        ld_act_q   <= 1'b1;
        ld_first_q <= 1'b1;
        ld_set_q   <= !cur_set_q;
        ld_m_q     <= ap_elems(cur.src0.size);
        ld_rd_q    <= '0;
        ld_rows_q  <= low_mask(cur.src0.num_part);
        ld_start_q <= cur.src0.start_part;
        ld_dt_q    <= cur.src0.dtype;
      end else if (ld_fire) begin
        ld_rd_q    <= ld_rd_q + 1;
        ld_first_q <= 1'b0;
        if (ld_last) ld_act_q <= 1'b0;
      end
      if (ld_fire) ls_start_o <= ld_first_q;
      ldd_v_q <= ld_fire;
      if (ld_fire) begin
        ldd_col_q   <= ColW'(ld_rd_q);
        ldd_last_q  <= ld_last;
        ldd_boff_q  <= ld_addr[1:0];
        ldd_set_q   <= ld_set_q;
        ldd_rows_q  <= ld_rows_q;
        ldd_start_q <= ld_start_q;
        ldd_dt_q    <= ld_dt_q;
      end
      ldp_v_q <= ldd_v_q;
      if (ldd_v_q) begin
        ldp_col_q  <= ldd_col_q;
        ldp_last_q <= ldd_last_q;
        ldp_set_q  <= ldd_set_q;
        ldp_data_q <= to_rows(sr_rsp_i.data[P*32-1:0], ldd_start_q, ldd_rows_q, ldd_boff_q, ldd_dt_q);
      end
      if (lsd_q != '0 || (ldp_v_q && ldp_last_q)) lsd_q <= {lsd_q[LsdW-2:0], ldp_v_q && ldp_last_q};
      ls_done_o <= lsd_q[LsdW-1];
    end
  end

  // ---------------------------------------------------------------------------------------
  // Multiply slots: what the writer needs per multiply in flight
  // ---------------------------------------------------------------------------------------
  logic [Slots-1:0][7:0]          sl_start_q;
  logic [Slots-1:0][PwAddrW-1:0]  sl_base_q;
  logic [Slots-1:0]               sl_acc_q;
  logic [Slots-1:0][ColW:0]       sl_m_q;
  logic [Slots-1:0]               sl_armed_q;     // last column presented: counting down
  logic [Slots-1:0][ColW+1:0]     sl_cd_q;        // cycles until its last result is in PSUM
  logic [SlotW:0]                 sl_alloc_q, sl_head_q;
  logic                           mvp_v_q, mvp_last_q;
  logic [TagW-1:0]                mvp_tag_q;
  logic                           head_done;

  wire [SlotW-1:0] head_slot = sl_head_q[SlotW-1:0];
  assign head_done = sl_armed_q[head_slot] && sl_cd_q[head_slot] == '0;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      sl_alloc_q <= '0;
      sl_head_q  <= '0;
      sl_armed_q <= '0;
      sl_cd_q    <= '0;
      mm_done_o  <= 1'b0;
    end else begin
      mm_done_o <= head_done;
      if (take_mm) begin
        sl_start_q[sl_alloc_q[SlotW-1:0]] <= cur.dst.start_part;
        sl_base_q[sl_alloc_q[SlotW-1:0]]  <= PwAddrW'(cur.dst.offset >> 2);
        sl_acc_q[sl_alloc_q[SlotW-1:0]]   <= cur.acc;
        sl_m_q[sl_alloc_q[SlotW-1:0]]     <= set_m_q[cur_set_q];
        sl_alloc_q                        <= sl_alloc_q + 1'b1;
      end
      for (int s = 0; s < Slots; s++) begin
        if (sl_armed_q[s] && sl_cd_q[s] != '0) sl_cd_q[s] <= sl_cd_q[s] - 1'b1;
      end
      // The last column was presented in this cycle: column M-1's result reaches PSUM
      // P + M cycles later (ncore_pe_array timing, plus the writer's register).
      if (mvp_v_q && mvp_last_q) begin
        sl_armed_q[mvp_tag_q[TagW-1:NW]] <= 1'b1;
        sl_cd_q[mvp_tag_q[TagW-1:NW]]    <= (ColW + 2)'(P) + (ColW + 2)'(sl_m_q[mvp_tag_q[TagW-1:NW]]);
      end
      if (head_done) begin
        sl_armed_q[head_slot] <= 1'b0;
        sl_head_q             <= sl_head_q + 1'b1;
      end
    end
  end

  `ASSERT(a_slots, (sl_alloc_q - sl_head_q) <= (SlotW + 1)'(Slots),
          $sformatf("%0d multiplies in flight, more than %0d slots", sl_alloc_q - sl_head_q, Slots))

  // ---------------------------------------------------------------------------------------
  // Streamer
  // ---------------------------------------------------------------------------------------
  // waiting multiply
  logic             mp_v_q, mp_set_q;
  ap_t              mp_ap_q;
  logic [SlotW-1:0] mp_slot_q;
  // streaming multiply
  logic             ma_v_q, ma_f32_q, ma_first_q;
  logic [31:0]      ma_n_q, ma_rd_q;    // columns, reads granted
  logic [SlotW-1:0] ma_slot_q;
  logic [P-1:0]     ma_rows_q;
  logic [7:0]       ma_start_q;
  dtype_e           ma_dt_q;
  logic [2:0]       ma_wait_q;          // fp32: cycles before the next read
  logic [15:0]      ma_cyc_q;           // cycles since it started, saturating
  // column on the read port
  logic             mvd_v_q, mvd_last_q, mvd_set_q;
  logic [1:0]       mvd_boff_q;
  logic [TagW-1:0]  mvd_tag_q;
  logic [P-1:0]     mvd_rows_q;
  logic [7:0]       mvd_start_q;
  dtype_e           mvd_dt_q;
  // column presented to the array
  logic               mvp_set_q;
  logic [P-1:0]       mvp_rows_q;
  logic [P-1:0][31:0] mvp_data_q;
  // PSUM lanes: cycles until a multiply starting at partition 0 could write without meeting
  // one that is draining (see the header); a start s waits while lane_wait_q >= P - s + 3.
  logic [ColW+2:0]  lane_wait_q;
  logic [AddrW-1:0] mv_addr;
  logic             mv_fire, ma_release, mp_go;
  logic [ColW+2:0]  lane_wait_eff;
  logic [ColW-1:0]  ma_dst_start;       // PSUM start partition of the streaming multiply
  logic [31:0]      unused_mv_rem0;
  logic             unused_mv_last;

  assign mm_can     = !mp_v_q && (sl_alloc_q - sl_head_q) != (SlotW + 1)'(Slots);
  assign mr_req_o = '{req: ma_v_q && ma_rd_q != ma_n_q && ma_wait_q == '0, psum: 1'b0, addr: MemAddrW'(mv_addr),
                     mask: MemLanes'(P'(ma_rows_q << ma_start_q))};
  assign mv_fire  = mr_req_o.req && mr_rsp_i.gnt;
  assign mm_last_rd = mv_fire && ma_rd_q + 1 == ma_n_q;
  // The streaming multiply frees the streamer once every column is read, the fp32 passes of
  // the last one are over and it has held the streamer Cfg.PeMmMinCycles cycles.
  assign ma_release = ma_v_q && (ma_rd_q == ma_n_q || mm_last_rd) &&
                      (mm_last_rd ? (!ma_f32_q || Passes <= 1) : ma_wait_q <= 3'd1) &&
                      32'(ma_cyc_q) + 1 >= Cfg.PeMmMinCycles;
  assign ma_dst_start  = ColW'(sl_start_q[ma_slot_q]);
  assign lane_wait_eff = (mm_last_rd && (ColW + 3)'(P + 2) - (ColW + 3)'(ma_dst_start) > lane_wait_q)
                       ? (ColW + 3)'(P + 2) - (ColW + 3)'(ma_dst_start) : lane_wait_q;
  // The waiting multiply starts when the streamer is free, its weights are loaded (the loader
  // is not filling its set) and its PSUM lanes are clear.
  assign mp_go = mp_v_q && (!ma_v_q || ma_release) &&
                 !(ld_act_q && ld_set_q == mp_set_q && !ld_last) &&
                 32'(lane_wait_eff) < P + 3 - 32'(sl_start_q[mp_slot_q]);

  ncore_ap_iter #(.AddrW(AddrW)) u_it_mv (
    .clk_i, .rst_ni, .init_i(mp_go), .base_i(AddrW'(mp_ap_q.offset)),
    .esz_log2_i(ap_esz_log2(mp_ap_q.dtype)), .size_i(mp_ap_q.size), .stride_i(mp_ap_q.stride),
    .step_i(mv_fire), .step_n_i(5'd1), .addr_o(mv_addr), .rem0_o(unused_mv_rem0), .last_o(unused_mv_last));

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      mp_v_q      <= 1'b0;
      ma_v_q      <= 1'b0;
      ma_first_q  <= 1'b0;
      ma_wait_q   <= '0;
      mvd_v_q     <= 1'b0;
      mvp_v_q     <= 1'b0;
      lane_wait_q <= '0;
      mm_start_o  <= 1'b0;
    end else begin
      mm_start_o <= 1'b0;
      if (take_mm) begin
        mp_v_q    <= 1'b1;
        mp_set_q  <= cur_set_q;
        mp_ap_q   <= cur.src0;
        mp_slot_q <= sl_alloc_q[SlotW-1:0];
      end else if (mp_go) begin
        mp_v_q <= 1'b0;
      end
      if (mp_go) begin
        ma_v_q     <= 1'b1;
        ma_first_q <= 1'b1;
        ma_set_q   <= mp_set_q;
        ma_slot_q  <= mp_slot_q;
        ma_n_q     <= ap_elems(mp_ap_q.size);
        ma_rd_q    <= '0;
        ma_rows_q  <= low_mask(mp_ap_q.num_part);
        ma_start_q <= mp_ap_q.start_part;
        ma_dt_q    <= mp_ap_q.dtype;
        ma_f32_q   <= mp_ap_q.dtype == DT_FP32;  // tf32 and the 16- and 8-bit floats: one pass
        ma_wait_q  <= '0;
        ma_cyc_q   <= '0;
      end else begin
        if (ma_release) ma_v_q <= 1'b0;
        if (ma_cyc_q != '1) ma_cyc_q <= ma_cyc_q + 1'b1;
        if (mv_fire) begin
          ma_rd_q    <= ma_rd_q + 1;
          ma_first_q <= 1'b0;
          mm_start_o <= ma_first_q;
          ma_wait_q  <= ma_f32_q ? 3'(Passes - 1) : 3'd0;
        end else if (ma_wait_q != '0) begin
          ma_wait_q <= ma_wait_q - 1'b1;
        end
      end
      lane_wait_q <= (lane_wait_eff != '0) ? lane_wait_eff - 1'b1 : '0;
      mvd_v_q <= mv_fire;
      if (mv_fire) begin
        mvd_last_q  <= ma_rd_q + 1 == ma_n_q;
        mvd_boff_q  <= mv_addr[1:0];
        mvd_set_q   <= ma_set_q;
        mvd_tag_q   <= {ma_slot_q, NW'(ma_rd_q)};
        mvd_rows_q  <= ma_rows_q;
        mvd_start_q <= ma_start_q;
        mvd_dt_q    <= ma_dt_q;
      end
      mvp_v_q <= mvd_v_q;
      if (mvd_v_q) begin
        mvp_last_q <= mvd_last_q;
        mvp_set_q  <= mvd_set_q;
        mvp_tag_q  <= mvd_tag_q;
        mvp_rows_q <= mvd_rows_q;
        mvp_data_q <= to_rows(mr_rsp_i.data[P*32-1:0], mvd_start_q, mvd_rows_q, mvd_boff_q, mvd_dt_q);
      end
    end
  end

  // ---------------------------------------------------------------------------------------
  // PE array
  // ---------------------------------------------------------------------------------------
  logic [P-1:0]           out_valid;
  logic [P-1:0][TagW-1:0] out_tag;
  logic [P-1:0][31:0]     out_data;
  logic                   arr_busy;

  ncore_pe_array #(.Cfg(Cfg), .Groups(Groups), .TagW(TagW)) u_array (
    .clk_i, .rst_ni,
    .mv_valid_i(mvp_v_q), .mv_set_i(mvp_set_q), .mv_rows_i(mvp_rows_q), .mv_data_i(mvp_data_q),
    .mv_tag_i(mvp_tag_q),
    .ld_valid_i(ldp_v_q), .ld_set_i(ldp_set_q), .ld_col_i(ldp_col_q), .ld_last_i(ldp_last_q),
    .ld_data_i(ldp_data_q),
    .out_valid_o(out_valid), .out_tag_o(out_tag), .out_data_o(out_data), .busy_o(arr_busy));

  // ---------------------------------------------------------------------------------------
  // Writer: column j of a multiply to PSUM partition start + j (columns >= M hold no result)
  // ---------------------------------------------------------------------------------------
  lane_wr_req_t pw_req_d;

`ifdef NCORE_ASSERT
  logic chk_pw_collide;  // two results for one PSUM lane in one cycle
`endif
  always_comb begin
    logic [SlotW-1:0] sl;
    logic [ColW-1:0]  p;
    sl         = '0;
    p          = '0;
`ifdef NCORE_ASSERT
    chk_pw_collide = 1'b0;
`endif
    pw_req_d   = '0;
    if (arr_busy) begin
      for (int j = 0; j < P; j++) begin
        sl = out_tag[j][TagW-1:NW];
        p  = ColW'(32'(sl_start_q[sl]) + 32'(j));
        if (out_valid[j] && 32'(j) < 32'(sl_m_q[sl])) begin
`ifdef NCORE_ASSERT
          if (pw_req_d.valid[MemPartW'(p)]) chk_pw_collide = 1'b1;
`endif
          pw_req_d.valid[MemPartW'(p)] = 1'b1;
          pw_req_d.acc[MemPartW'(p)]   = sl_acc_q[sl];
          pw_req_d.addr[PsumWordW*32'(p) +: PsumWordW] =
              PsumWordW'(PwAddrW'(sl_base_q[sl] + PwAddrW'(out_tag[j][NW-1:0])));
          pw_req_d.data[32*32'(p) +: 32] = out_data[j];
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pw_req_o.valid <= '0;
    end else if (arr_busy || pw_req_o.valid != '0) begin
      pw_req_o <= pw_req_d;
    end
  end

  // One writer per PSUM lane per cycle: two multiplies' results never meet on a partition.
  `ASSERT_NEVER(a_psum_lane, chk_pw_collide, "two results for one PSUM partition in one cycle")

  // ---------------------------------------------------------------------------------------
  // Performance counters (the profile's matmul MACs and tensor-engine utilisation), 64 bits,
  // cleared by rst_ni, out through perf_macs_o and perf_busy_o:
  //   perf_macs_q      multiply-accumulates the array was given: each moving column presented
  //                    counts its rows (K) times its stationary's columns (M);
  //   perf_busy_q      cycles in which the array held a column in flight.
  // ---------------------------------------------------------------------------------------
  logic [63:0] perf_macs_q;
  logic [63:0] perf_busy_q;
  assign perf_macs_o = perf_macs_q;
  assign perf_busy_o = perf_busy_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      perf_macs_q <= '0;
      perf_busy_q <= '0;
    end else begin
      if (mvp_v_q)
        perf_macs_q <= perf_macs_q + 64'($countones(mvp_rows_q)) * 64'(sl_m_q[mvp_tag_q[TagW-1:NW]]);
      if (arr_busy) perf_busy_q <= perf_busy_q + 64'd1;
    end
  end

  assign busy_o = hold_v_q || ld_act_q || ldd_v_q || ldp_v_q || lsd_q != '0 || mp_v_q || ma_v_q ||
                  mvd_v_q || mvp_v_q || arr_busy || pw_req_o.valid != '0 || sl_alloc_q != sl_head_q ||
                  accept_o || ls_start_o || mm_start_o || ls_done_o || mm_done_o;

  // Done pulses answer accepted instructions, once each; a refused SBUF read is presented again,
  // unchanged, in the next cycle (1-bit comparisons: the lane masks are wider than a concurrent
  // assertion of Verilator 5.006 can sample).
`ifdef NCORE_ASSERT
  logic [7:0]       chk_ls_q;             // loads accepted whose ls_done has not pulsed
  logic [7:0]       chk_mm_q;             // multiplies accepted whose mm_done has not pulsed
  logic        chk_mr_q, chk_sr_q;          // a read refused in the last cycle
  eng_rd_req_t chk_mr_req_q, chk_sr_req_q;  // ... the request
  logic        chk_mr_same, chk_sr_same;    // the read presented is the one refused
  assign chk_mr_same = mr_req_o == chk_mr_req_q;
  assign chk_sr_same = sr_req_o == chk_sr_req_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      chk_ls_q     <= '0;
      chk_mm_q     <= '0;
      {chk_mr_q, chk_sr_q, chk_mr_req_q, chk_sr_req_q} <= '0;
    end else begin
      chk_ls_q     <= chk_ls_q + 8'(take_ls) - 8'(ls_done_o);
      chk_mm_q     <= chk_mm_q + 8'(take_mm) - 8'(mm_done_o);
      {chk_mr_q, chk_sr_q} <= {mr_req_o.req && !mr_rsp_i.gnt, sr_req_o.req && !sr_rsp_i.gnt};
      {chk_mr_req_q, chk_sr_req_q} <= {mr_req_o, sr_req_o};
    end
  end
`endif
  `ASSERT_IF(a_ls_done_once, chk_ls_q != '0, ls_done_o, "ls_done pulse with no load_stationary outstanding")
  `ASSERT_IF(a_mm_done_once, chk_mm_q != '0, mm_done_o, "mm_done pulse with no multiply_moving outstanding")
  `ASSERT_IF(a_mr_held, chk_mr_same, chk_mr_q,
             $sformatf("refused moving-operand read not held (addr %0h)", mr_req_o.addr))
  `ASSERT_IF(a_sr_held, chk_sr_same, chk_sr_q,
             $sformatf("refused stationary-operand read not held (addr %0h)", sr_req_o.addr))

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // load_stationary and multiply_moving x operand dtype; accumulate and overwrite; what holds the
  // engine back: an instruction held for its unit, every multiply slot taken, a multiply waiting
  // on its PSUM lanes or its weights, refused SBUF reads; a load in the shadow of a multiply.
  // (Bins are written out one per label: Verilator's coverage file merges the instances of a
  // generate loop into one point.)
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      `COVER_DTYPES(c_load_stationary, take_ls, cur.src0.dtype)
      `COVER_DTYPES(c_multiply_moving, take_mm, cur.src0.dtype)
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      c_mm_acc:       cover (take_mm && cur.acc);
      c_mm_overwrite: cover (take_mm && !cur.acc);
      c_held:         cover (hold_v_q);
      c_slots_full:   cover ((sl_alloc_q - sl_head_q) == (SlotW + 1)'(Slots));
      c_mm_waits:     cover (mp_v_q && (!ma_v_q || ma_release) && !mp_go);
      c_ls_shadow:    cover (take_ls && ma_v_q);
      c_mr_refused:   cover (mr_req_o.req && !mr_rsp_i.gnt);
      c_sr_refused:   cover (sr_req_o.req && !sr_rsp_i.gnt);
      c_fp32_passes:  cover (ma_v_q && ma_f32_q && ma_wait_q != '0);
    end
  end
`endif
endmodule
