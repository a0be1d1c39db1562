// Memory-access front end of the lane engines (ncore_dve, ncore_act): everything an engine does
// between its instruction port and its SBUF/PSUM ports, so that the engine itself holds only the
// arithmetic of its lanes.
//
// It takes one instruction at a time (valid/ready), walks the instruction's operands (one
// ncore_ap_iter per streamed operand), issues the reads and the writes on the engine's one read
// and one write port (ncore_mem_pkg's request and response structs; the write data is the lanes'
// result, wr_data_i), each to the SBUF or the PSUM as its operand says (the requests' psum),
// widens the data on the read port to fp32 per lane, and paces the instruction on the cycles its
// clock enable allows:
//
//   accept -> START (StartCycles: the documented access start overhead)
//          -> SCAL  (the per-partition operands s0 and s1 it needs: a read, then a capture cycle,
//                    into the lane registers s0_o / s1_o, which otherwise hold imm0 / imm1)
//          -> RUN   (stream the free elements)
//          -> RED   (HasDst2, an instruction with an add-reduce result dst2: RedCycles cycles of
//                    read-out, the last of which writes the (P,1) result the lanes offer)
//          -> HOLD  (pad to MinIi cycles, the documented minimum initiation interval)
//          -> done pulse
//
// RUN streams elements through the ports with one protocol for every instruction: read data
// arrives the cycle after the grant and stays on the port until the next granted read; the lanes
// compute from it in that cycle (elem_o) and the result is presented to the write port; a
// refused write retries with the same data while no new read is issued. What a read brings is
// decided by the instruction:
//   - one source (tensor_copy, tensor_scalar, activation): each read completes an element;
//   - tensor_tensor (TwoSrc): src0 then src1, one element per two reads; src0's data is handed
//     to the lanes (src0_o) the cycle it is on the port, to be held while src1 is read;
//   - tensor_reduce: src0 in groups of R elements (R = the product of the red_axes innermost
//     sizes); all but the last of a group are folded (fold_o) rather than written, first_o marks
//     a group's first element; the group's last completes the element (elem_o);
//   - memset: no reads; one write per element.
//
//   cycle   read port        data on port     write port
//   c       src0[i]
//   c+1     src1[i]          src0[i]  (src0_o)
//   c+2     src0[i+1]        src1[i]  (elem_o) dst[i] = f(src0[i], src1[i])
//
// Element counts: a stream reads ap_elems(src0) elements for tensor_reduce and ap_elems(dst)
// otherwise, and writes ap_elems(dst). The per-partition operands are read before anything is
// written and dst2 after all of dst, so they may sit anywhere.
`include "ncore_assert.svh"

module ncore_eng_front
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_fp_pkg::*;
  import ncore_ap_pkg::*;
  import ncore_mem_pkg::*;
#(
  parameter cfg_t         Cfg         = CfgTrn2,
  parameter int unsigned  StartCycles = 1,
  parameter int unsigned  MinIi       = 1,
  parameter bit           TwoSrc      = 1'b0,  // tensor_tensor: src1 streamed beside src0
  parameter bit           HasDst2     = 1'b0,  // activation: the add-reduce result dst2
  parameter int unsigned  RedCycles   = 1,     // HasDst2: the read-out of dst2's accumulators
  localparam int unsigned P           = Cfg.NumPartitions,
  localparam int unsigned AddrW       = $clog2(Cfg.SbufBytes)
) (
  // the engine's clock enable, instruction port and memory ports (as ncore_dve's)
`include "ncore_lane_ports.svh"
  ,
  // the lanes' side
  input  logic [P-1:0][31:0]   wr_data_i,  // the lanes' result: the write port's data
  output insn_t                insn_o,     // the instruction taken
  output logic [P-1:0]         mask_o,     // its lanes (dst's partitions)
  output logic                 accept_o,   // an instruction is taken at this edge (from insn_i)
  output logic [P-1:0][31:0]   data_o,     // the data on the read port as fp32, when it is used
  output logic [1:0]           data_boff_o,  // ... its element's byte offset in its word
  output logic                 bits_o,     // the lanes carry the elements' bits, not fp32 (a bitvec op)
  output dtype_e               data_dt_o,  // ... its dtype
  output logic [P-1:0][31:0]   s0_o,       // operand0 per lane, fp32: s0 or imm0
  output logic [P-1:0][31:0]   s1_o,       // operand1 per lane, fp32: s1 or imm1
  output logic                 src0_o,     // the data is src0 of a two-source element: hold it
  output logic                 fold_o,     // the data is a group element that is not written
  output logic                 first_o,    // the data is the first element of its group
  output logic                 elem_o,     // the lanes compute an element; it is offered to dst
  output logic                 elem_wr_o,  // ... and its write is granted
  output logic                 red_o       // the lanes' dst2 result is offered to the write port
);
  // The memory ports' structs are as wide as the largest preset (ncore_mem_pkg).
  if (P > MemLanes || AddrW > MemAddrW) begin : g_fits
    $error("%0d lanes and %0d address bits do not fit ncore_mem_pkg's ports (%0d, %0d)", P, AddrW, MemLanes,
           MemAddrW);
  end

  typedef enum logic [2:0] {S_IDLE, S_START, S_SCAL, S_RUN, S_RED, S_HOLD} state_e;
  // What the data on the read port belongs to.
  typedef enum logic [2:0] {D_NONE, D_SRC0, D_LAST, D_SCAL, D_PART} data_e;

  // The instruction's state (_q registers, _d their next values): the state machine and its
  // countdowns, the stream of reads and what the data on the port is, the elements written.
  state_e             state_q, state_d;
  logic [15:0]        wait_q, wait_d;            // START and RED countdown
  logic [15:0]        cyc_q, cyc_d;              // cycles since accept, saturating
  data_e              data_q, data_d;
  logic [1:0]         data_boff_q, data_boff_d;  // byte offset of the element on the port in its word
  dtype_e             data_dt_q, data_dt_d;
  logic               d_first_q, d_first_d;      // the data on the port starts its group
  logic [31:0]        gpos_q, gpos_d;            // elements of the current group read
  logic [31:0]        rd_cnt_q, rd_cnt_d;        // elements whose last read has been granted
  logic [31:0]        wr_cnt_q, wr_cnt_d;        // elements written
  logic               rd_phase_q, rd_phase_d;    // two sources: next read is src1
  logic               scal_phase_q, scal_phase_d;  // SCAL: 0 reading s0, 1 reading s1
  logic               first_rd_q, first_rd_d;    // rd_start not yet pulsed
  logic               rd_start_d, done_d;
  // What the instruction is, decoded as it is taken (dec_*) and held while it runs.
  insn_t              insn_q;
  logic [P-1:0]       mask_q, dec_mask;
  logic [31:0]        n_q, dec_n;                // free elements per partition to read
  logic [31:0]        nw_q, dec_nw;              // free elements per partition to write (dst's)
  logic [31:0]        grp_q, dec_grp;            // elements per group (R; 1 but for tensor_reduce)
  logic               two_q, dec_two;            // two reads per element (tensor_tensor)
  logic               bits_q, dec_bits;          // a bitvec instruction: data_o, s0_o, s1_o are bits (alu_is_bitvec)
  logic               gen_q, dec_gen;            // no reads (memset)
  logic               need_s0_q, dec_need_s0;    // s0 is read in SCAL
  logic               need_s1_q, dec_need_s1;    // s1 is read in SCAL
  logic               red_q, dec_red;            // dst2 is written in RED
  // The per-partition operands in the lanes: the immediates from the accept, the vectors once
  // SCAL captures them (s0_cap, s1_cap).
  logic [P-1:0][31:0] s0_q, s1_q;
  logic               s0_cap, s1_cap;

  // ---------------------------------------------------------------------------------------
  // What an instruction reads and writes (decoded as it is taken)
  // ---------------------------------------------------------------------------------------
  function automatic logic [P-1:0] lane_mask(logic [7:0] start, logic [7:0] num);
    logic [P-1:0] m;
    for (int p = 0; p < P; p++) m[p] = (32'(p) >= 32'(start)) && (32'(p) < 32'(start) + 32'(num));
    lane_mask = m;
  endfunction

  // tensor_reduce: elements per group, the product of the red_axes innermost sizes of src0
  // (ap_t.size: dims[d] at bits 32 d +: 32).
  function automatic logic [31:0] red_group(logic [127:0] size, logic [2:0] axes);
    logic [31:0] g;
    g = size[31:0];
    if (axes >= 3'd2) g = g * size[63:32];
    if (axes >= 3'd3) g = g * size[95:64];
    if (axes >= 3'd4) g = g * size[127:96];
    red_group = g;
  endfunction

  // Whether an instruction reads a per-partition operand (s0 with op0 and s0_vec, s1 with op1
  // and s1_vec): tensor_scalar where its op takes the vector, activation's scale and bias vectors.
  function automatic logic needs_s(opcode_e opcode, logic vec, alu_op_e op);
    needs_s = (opcode == OP_TENSOR_SCALAR && vec && op != ALU_BYPASS) || (opcode == OP_ACTIVATION && vec);
  endfunction

  // Decoded only in the cycle an instruction is taken (the instruction on insn_i is not looked
  // at otherwise).
  always_comb begin : p_decode
    dec_mask    = '0;
    dec_n       = '0;
    dec_nw      = '0;
    dec_grp     = '0;
    dec_two     = 1'b0;
    dec_bits    = 1'b0;
    dec_gen     = 1'b0;
    dec_need_s0 = 1'b0;
    dec_need_s1 = 1'b0;
    dec_red     = 1'b0;
    if (accept_o) begin
      dec_mask = lane_mask(insn_i.dst.start_part, insn_i.dst.num_part);
      if (insn_i.opcode == OP_TENSOR_REDUCE) begin
        dec_n   = ap_elems(insn_i.src0.size);
        dec_grp = red_group(insn_i.src0.size, insn_i.red_axes);
      end else begin
        dec_n   = ap_elems(insn_i.dst.size);
        dec_grp = 32'd1;
      end
      dec_nw      = ap_elems(insn_i.dst.size);
      dec_two     = TwoSrc && insn_i.opcode == OP_TENSOR_TENSOR;
      dec_bits    = (insn_i.opcode == OP_TENSOR_TENSOR || insn_i.opcode == OP_TENSOR_SCALAR ||
                     insn_i.opcode == OP_TENSOR_REDUCE) &&
                    (alu_is_bitvec(insn_i.op0) || (insn_i.opcode == OP_TENSOR_SCALAR && alu_is_bitvec(insn_i.op1)));
      dec_gen     = insn_i.opcode == OP_MEMSET;
      dec_need_s0 = needs_s(insn_i.opcode, insn_i.s0_vec, insn_i.op0);
      dec_need_s1 = needs_s(insn_i.opcode, insn_i.s1_vec, insn_i.op1);
      dec_red     = HasDst2 && insn_i.dst2.num_part != 8'd0;
    end
  end

  // ---------------------------------------------------------------------------------------
  // Address generators: src0, src1 (TwoSrc), dst
  // ---------------------------------------------------------------------------------------
  logic [AddrW-1:0] s0_addr, s1_addr, d_addr;
  logic             it_init, s0_step, s1_step, d_step;
  logic [31:0]      unused_rem0 [3];
  logic             unused_last [3];

  ncore_ap_iter #(.AddrW(AddrW)) u_it_s0 (
    .clk_i, .rst_ni, .init_i(it_init), .base_i(AddrW'(insn_i.src0.offset)),
    .esz_log2_i(ap_esz_log2(insn_i.src0.dtype)), .size_i(insn_i.src0.size), .stride_i(insn_i.src0.stride),
    .step_i(s0_step), .step_n_i(5'd1), .addr_o(s0_addr), .rem0_o(unused_rem0[0]), .last_o(unused_last[0]));
  if (TwoSrc) begin : g_src1
    ncore_ap_iter #(.AddrW(AddrW)) u_it_s1 (
      .clk_i, .rst_ni, .init_i(it_init), .base_i(AddrW'(insn_i.src1.offset)),
      .esz_log2_i(ap_esz_log2(insn_i.src1.dtype)), .size_i(insn_i.src1.size), .stride_i(insn_i.src1.stride),
      .step_i(s1_step), .step_n_i(5'd1), .addr_o(s1_addr), .rem0_o(unused_rem0[1]), .last_o(unused_last[1]));
  end else begin : g_no_src1
    logic unused_s1_step;
    assign unused_s1_step = s1_step;
    assign s1_addr        = '0;
    assign unused_rem0[1] = '0;
    assign unused_last[1] = 1'b0;
  end
  ncore_ap_iter #(.AddrW(AddrW)) u_it_d (
    .clk_i, .rst_ni, .init_i(it_init), .base_i(AddrW'(insn_i.dst.offset)),
    .esz_log2_i(ap_esz_log2(insn_i.dst.dtype)), .size_i(insn_i.dst.size), .stride_i(insn_i.dst.stride),
    .step_i(d_step), .step_n_i(5'd1), .addr_o(d_addr), .rem0_o(unused_rem0[2]), .last_o(unused_last[2]));

  // ---------------------------------------------------------------------------------------
  // Read data, per lane (combinational from the read port)
  // ---------------------------------------------------------------------------------------
  logic               use_data;  // this cycle consumes the data on the port
  logic [P-1:0][31:0] rd;        // the read port, copied once (below)

  assign use_data = ce_i && ((state_q == S_RUN && data_q != D_NONE) || (state_q == S_SCAL && data_q == D_SCAL));

  // Converted only in cycles that use it, so an idle or waiting engine costs one vector clear.
  // (Per-lane work stays in combinational blocks and the registers take whole vectors: loops in
  // clocked blocks would be unrolled P times.) The port is copied once into `rd` before the lane
  // loop: where the core selects the read data from several memories, Verilator would otherwise
  // evaluate that selection, P x 32 bits wide, once per lane.
  always_comb begin : p_data
    logic [31:0] e;
    data_o = '0;
    rd     = '0;
    e      = '0;
    if (use_data) begin
      rd = rd_rsp_i.data[P*32-1:0];
      for (int p = 0; p < P; p++) begin
        if (mask_q[p]) begin
          e = ap_elem_of_word(rd[p], data_boff_q, data_dt_q);
          data_o[p] = bits_q ? e : fp_to_f32(e, data_dt_q);
        end
      end
    end
  end

  assign insn_o      = insn_q;
  assign mask_o      = mask_q;
  assign data_boff_o = data_boff_q;
  assign bits_o      = bits_q;
  assign data_dt_o   = data_dt_q;
  assign s0_o        = s0_q;
  assign s1_o        = s1_q;
  assign first_o     = d_first_q;
  assign src0_o      = ce_i && state_q == S_RUN && data_q == D_SRC0;
  assign fold_o      = ce_i && state_q == S_RUN && data_q == D_PART;
  assign elem_o      = ce_i && state_q == S_RUN && (gen_q || data_q == D_LAST);
  assign red_o       = ce_i && state_q == S_RED && wait_q <= 16'd1;

  // ---------------------------------------------------------------------------------------
  // Ports
  // ---------------------------------------------------------------------------------------
  logic want_rd, rd_fire, rd_is_src1, want_wr, wr_fire, in_red;
  logic rd_psum, wr_psum;
  logic [AddrW-1:0] rd_addr, wr_addr;
  logic [3:0] wr_ben;

  always_comb begin : p_rd_port
    want_rd    = 1'b0;
    rd_is_src1 = 1'b0;
    rd_addr  = s0_addr;
    rd_psum  = 1'b0;
    if (ce_i && state_q == S_RUN) begin
      // A new read is allowed unless it would overwrite data still waiting to be written.
      if (!gen_q && rd_cnt_q < n_q && (data_q != D_LAST || wr_rsp_i.gnt)) begin
        want_rd    = 1'b1;
        rd_is_src1 = TwoSrc && two_q && rd_phase_q;
        rd_addr  = rd_is_src1 ? s1_addr : s0_addr;
        rd_psum  = (rd_is_src1 ? insn_q.src1.mem : insn_q.src0.mem) == BUF_PSUM;
      end
    end else if (ce_i && state_q == S_SCAL && data_q == D_NONE) begin
      want_rd   = 1'b1;
      rd_addr = AddrW'(scal_phase_q ? insn_q.s1.offset : insn_q.s0.offset);
      rd_psum = (scal_phase_q ? insn_q.s1.mem : insn_q.s0.mem) == BUF_PSUM;
    end
  end

  assign rd_req_o  = '{req: want_rd, psum: rd_psum, addr: MemAddrW'(rd_addr), mask: MemLanes'(mask_q)};
  assign rd_fire   = want_rd && rd_rsp_i.gnt;

  assign in_red    = state_q == S_RED;
  assign want_wr   = (ce_i && state_q == S_RUN && (gen_q ? wr_cnt_q < nw_q : data_q == D_LAST)) || red_o;
  assign wr_addr   = in_red ? AddrW'(insn_q.dst2.offset) : d_addr;
  assign wr_psum   = (in_red ? insn_q.dst2.mem : insn_q.dst.mem) == BUF_PSUM;
  assign wr_ben    = ap_elem_ben(in_red ? insn_q.dst2.dtype : insn_q.dst.dtype);
  // The lanes' result is sampled at the grant, in the cycle it is computed.
  assign wr_req_o  = '{req: want_wr, psum: wr_psum, addr: MemAddrW'(wr_addr), mask: MemLanes'(mask_q), ben: wr_ben,
                       data: (MemLanes * 32)'(wr_data_i)};
  assign wr_fire   = want_wr && wr_rsp_i.gnt;
  assign elem_wr_o = wr_fire && state_q == S_RUN;

  assign it_init = accept_o;
  assign s0_step = rd_fire && state_q == S_RUN && !rd_is_src1;
  assign s1_step = rd_fire && state_q == S_RUN && rd_is_src1;
  assign d_step  = elem_wr_o;

  assign accept_o     = insn_valid_i && insn_ready_o;
  assign insn_ready_o = state_q == S_IDLE;
  assign busy_o       = state_q != S_IDLE;

  // A refused read or write is presented again, unchanged, in the next enabled cycle; requests
  // only while an instruction runs.
`ifdef NCORE_ASSERT
  logic             chk_rd_q, chk_wr_q;       // a request refused in the last enabled cycle
  logic             chk_rd_psum_q, chk_wr_psum_q;
  logic [AddrW-1:0] chk_rd_addr_q, chk_wr_addr_q;
  logic [3:0]       chk_wr_ben_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      chk_rd_q      <= 1'b0;
      chk_wr_q      <= 1'b0;
      chk_rd_psum_q <= 1'b0;
      chk_wr_psum_q <= 1'b0;
      chk_rd_addr_q <= '0;
      chk_wr_addr_q <= '0;
      chk_wr_ben_q  <= '0;
    end else if (ce_i) begin
      chk_rd_q      <= want_rd && !rd_rsp_i.gnt;
      chk_rd_psum_q <= rd_psum;
      chk_rd_addr_q <= rd_addr;
      chk_wr_q      <= want_wr && !wr_rsp_i.gnt;
      chk_wr_psum_q <= wr_psum;
      chk_wr_addr_q <= wr_addr;
      chk_wr_ben_q  <= wr_ben;
    end
  end
`endif
  `ASSERT_IF(a_rd_held, want_rd && rd_addr == chk_rd_addr_q && rd_psum == chk_rd_psum_q, ce_i && chk_rd_q,
             $sformatf("refused read (addr %0h, psum %0d) not held: req %0d addr %0h psum %0d",
                       chk_rd_addr_q, chk_rd_psum_q, want_rd, rd_addr, rd_psum))
  `ASSERT_IF(a_wr_held, want_wr && wr_addr == chk_wr_addr_q && wr_psum == chk_wr_psum_q && wr_ben == chk_wr_ben_q,
             ce_i && chk_wr_q,
             $sformatf("refused write (addr %0h, psum %0d) not held: req %0d addr %0h psum %0d",
                       chk_wr_addr_q, chk_wr_psum_q, want_wr, wr_addr, wr_psum))
  `ASSERT_IF(a_req_busy, busy_o, want_rd || want_wr, "memory request while idle")

  // ---------------------------------------------------------------------------------------
  // The state machine
  // ---------------------------------------------------------------------------------------
  always_comb begin : p_fsm
    state_d = state_q;
    wait_d  = wait_q;
    cyc_d   = cyc_q;
    done_d  = 1'b0;
    if (state_q != S_IDLE && ce_i && cyc_q != '1) cyc_d = cyc_q + 1;
    unique case (state_q)
      S_IDLE: begin
        if (insn_valid_i) begin
          state_d = S_START;
          wait_d  = 16'(StartCycles);
          cyc_d   = '0;
        end
      end
      S_START: begin
        if (ce_i) begin
          if (wait_q > 1)                  wait_d  = wait_q - 1;
          else if (need_s0_q || need_s1_q) state_d = S_SCAL;
          else                             state_d = S_RUN;
        end
      end
      S_SCAL: begin
        // The last operand word on the port: its capture ends SCAL.
        if (ce_i && data_q == D_SCAL && (scal_phase_q || !need_s1_q)) state_d = S_RUN;
      end
      S_RUN: begin
        // Finished streaming when every element has been written.
        if (ce_i && ((wr_fire && wr_cnt_q + 1 == nw_q) || nw_q == 0)) begin
          if (red_q) begin
            state_d = S_RED;
            wait_d  = 16'(RedCycles);
          end else begin
            state_d = S_HOLD;
          end
        end
      end
      S_RED: begin
        if (ce_i) begin
          if (wait_q > 1)   wait_d  = wait_q - 1;
          else if (wr_fire) state_d = S_HOLD;
        end
      end
      S_HOLD: begin
        if (ce_i && 32'(cyc_q) + 1 >= MinIi) begin
          done_d  = 1'b1;
          state_d = S_IDLE;
        end
      end
      default: if (ce_i) state_d = S_IDLE;
    endcase
  end

  // The instruction is presented only to an idle engine (it would be lost otherwise); every done
  // pulse answers one accepted instruction (none completes twice), none accepted before the
  // previous one's done; the element counters within the instruction's counts.
`ifdef NCORE_ASSERT
  logic chk_busy_q;  // an accepted instruction has not pulsed done yet
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) chk_busy_q <= 1'b0;
    else         chk_busy_q <= (chk_busy_q && !done_o) || accept_o;
  end
`endif
  `ASSERT_WIDE(a_insn_idle, !insn_valid_i || insn_ready_o,
               $sformatf("instruction (opcode %0d) presented while the engine is busy (state %0d)", insn_i.opcode,
                         state_q))
  `ASSERT_IF(a_done_once, chk_busy_q, done_o, "done pulse with no accepted instruction outstanding")
  `ASSERT_IF(a_accept_idle, !chk_busy_q || done_o, accept_o, "instruction accepted before the previous one's done pulse")
  `ASSERT_IF(a_counts, rd_cnt_q <= n_q && wr_cnt_q <= nw_q, state_q == S_RUN,
             $sformatf("element counters past their ends: read %0d of %0d, written %0d of %0d", rd_cnt_q, n_q,
                       wr_cnt_q, nw_q))

  // ---------------------------------------------------------------------------------------
  // The stream of reads: what the data on the port is, the per-partition operands (SCAL) and the
  // elements (RUN) read so far
  // ---------------------------------------------------------------------------------------
  always_comb begin : p_reads
    data_d       = data_q;
    data_boff_d  = data_boff_q;
    data_dt_d    = data_dt_q;
    d_first_d    = d_first_q;
    gpos_d       = gpos_q;
    rd_cnt_d     = rd_cnt_q;
    rd_phase_d   = rd_phase_q;
    scal_phase_d = scal_phase_q;
    first_rd_d   = first_rd_q;
    rd_start_d   = 1'b0;
    s0_cap       = 1'b0;
    s1_cap       = 1'b0;
    if (accept_o) begin
      data_d       = D_NONE;
      gpos_d       = '0;
      rd_cnt_d     = '0;
      rd_phase_d   = 1'b0;
      scal_phase_d = !dec_need_s0;
      first_rd_d   = 1'b1;
    end else if (ce_i) begin
      unique case (state_q)
        S_SCAL: begin
          if (data_q == D_SCAL) begin
            // Operand word on the port: capture it into the lane registers.
            s0_cap = !scal_phase_q;
            s1_cap = scal_phase_q;
            data_d = D_NONE;
            if (!scal_phase_q && need_s1_q) scal_phase_d = 1'b1;
          end else if (rd_fire) begin
            data_d      = D_SCAL;
            data_boff_d = rd_addr[1:0];
            data_dt_d   = scal_phase_q ? insn_q.s1.dtype : insn_q.s0.dtype;
          end
        end
        S_RUN: begin
          if (rd_fire) begin
            data_boff_d = rd_addr[1:0];
            if (two_q && !rd_is_src1) begin
              data_d    = D_SRC0;
              data_dt_d = insn_q.src0.dtype;
            end else begin
              // An element's last read: the group's last element is written, every other one
              // folded.
              data_d    = (gpos_q + 1 == grp_q) ? D_LAST : D_PART;
              data_dt_d = rd_is_src1 ? insn_q.src1.dtype : insn_q.src0.dtype;
              d_first_d = gpos_q == '0;
              gpos_d    = (gpos_q + 1 == grp_q) ? '0 : gpos_q + 1;
              rd_cnt_d  = rd_cnt_q + 1;
            end
            rd_phase_d = two_q && !rd_is_src1;
          end else if ((data_q == D_LAST && wr_fire) || data_q == D_PART) begin
            data_d = D_NONE;
          end
          // (src0 stays on the port while the src1 read is refused.)
        end
        default: ;
      endcase
      // rd_start_o: at the instruction's first granted read, or a memset's first write.
      if (first_rd_q && ((state_q == S_SCAL && data_q != D_SCAL && rd_fire) ||
                         (state_q == S_RUN && (rd_fire || (gen_q && wr_fire))))) begin
        rd_start_d = 1'b1;
        first_rd_d = 1'b0;
      end
    end
  end

  assign wr_cnt_d = accept_o                              ? '0 :
                    (ce_i && state_q == S_RUN && wr_fire) ? wr_cnt_q + 1 : wr_cnt_q;

  // ---------------------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------------------
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q      <= S_IDLE;
      wait_q       <= '0;
      cyc_q        <= '0;
      data_q       <= D_NONE;
      data_boff_q  <= 2'b0;
      data_dt_q    <= DT_FP32;
      d_first_q    <= 1'b0;
      gpos_q       <= '0;
      rd_cnt_q     <= '0;
      wr_cnt_q     <= '0;
      rd_phase_q   <= 1'b0;
      scal_phase_q <= 1'b0;
      first_rd_q   <= 1'b0;
      rd_start_o   <= 1'b0;
      done_o       <= 1'b0;
    end else begin
      state_q      <= state_d;
      wait_q       <= wait_d;
      cyc_q        <= cyc_d;
      data_q       <= data_d;
      data_boff_q  <= data_boff_d;
      data_dt_q    <= data_dt_d;
      d_first_q    <= d_first_d;
      gpos_q       <= gpos_d;
      rd_cnt_q     <= rd_cnt_d;
      wr_cnt_q     <= wr_cnt_d;
      rd_phase_q   <= rd_phase_d;
      scal_phase_q <= scal_phase_d;
      first_rd_q   <= first_rd_d;
      rd_start_o   <= rd_start_d;
      done_o       <= done_d;
    end
  end

  // The instruction, loaded as it is taken, and the lanes' operands: the immediates in every lane
  // from the accept; SCAL replaces them by the per-partition vectors.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      insn_q    <= '0;
      mask_q    <= '0;
      n_q       <= '0;
      nw_q      <= '0;
      grp_q     <= '0;
      two_q     <= 1'b0;
      bits_q    <= 1'b0;
      gen_q     <= 1'b0;
      need_s0_q <= 1'b0;
      need_s1_q <= 1'b0;
      red_q     <= 1'b0;
      s0_q      <= '0;
      s1_q      <= '0;
    end else if (accept_o) begin
      insn_q    <= insn_i;
      mask_q    <= dec_mask;
      n_q       <= dec_n;
      nw_q      <= dec_nw;
      grp_q     <= dec_grp;
      two_q     <= dec_two;
      bits_q    <= dec_bits;
      gen_q     <= dec_gen;
      need_s0_q <= dec_need_s0;
      need_s1_q <= dec_need_s1;
      red_q     <= dec_red;
      s0_q      <= {P{insn_i.imm0}};
      s1_q      <= {P{insn_i.imm1}};
    end else if (s0_cap) begin
      s0_q <= data_o;
    end else if (s1_cap) begin
      s1_q <= data_o;
    end
  end

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // Back-pressure on the engine's ports: a read or a write refused (the memories' arbitration).
  always_ff @(posedge clk_i) begin
    if (rst_ni && ce_i) begin
      c_rd_refused: cover (want_rd && !rd_rsp_i.gnt);
      c_wr_refused: cover (want_wr && !wr_rsp_i.gnt);
    end
  end
`endif
endmodule
