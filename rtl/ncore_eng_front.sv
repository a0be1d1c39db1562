// Memory-access front end of the lane engines (ncore_dve, ncore_act): everything an engine does
// between its instruction port and its SBUF/PSUM ports, so that the engine itself holds only the
// arithmetic of its lanes.
//
// It takes one instruction at a time (valid/ready), walks the instruction's operands (one
// ncore_ap_iter per streamed operand), issues the reads and the writes on the engine's one read
// and one write port, each to the SBUF or the PSUM as its operand says (rd_psum_o, wr_psum_o),
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
module ncore_eng_front
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_fp_pkg::*;
  import ncore_ap_pkg::*;
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
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 ce_i,
  // the engine's instruction and memory ports (see ncore_dve)
  input  logic                 insn_valid_i,
  input  insn_t                insn_i,
  output logic                 insn_ready_o,
  output logic                 rd_start_o,
  output logic                 done_o,
  output logic                 busy_o,
  output logic                 rd_req_o,
  output logic                 rd_psum_o,
  output logic [AddrW-1:0]     rd_addr_o,
  output logic [P-1:0]         rd_mask_o,
  input  logic                 rd_gnt_i,
  input  logic [P-1:0][31:0]   rd_data_i,
  output logic                 wr_req_o,
  output logic                 wr_psum_o,
  output logic [AddrW-1:0]     wr_addr_o,
  output logic [P-1:0]         wr_mask_o,
  output logic [3:0]           wr_ben_o,
  input  logic                 wr_gnt_i,
  // the lanes' side
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
  typedef enum logic [2:0] {S_IDLE, S_START, S_SCAL, S_RUN, S_RED, S_HOLD} state_e;
  // What the data on the read port belongs to.
  typedef enum logic [2:0] {D_NONE, D_SRC0, D_LAST, D_SCAL, D_PART} data_e;

  state_e             state_q;
  data_e              data_q;
  insn_t              insn_q;
  logic [P-1:0]       mask_q;
  logic [31:0]        n_q;           // free elements per partition to read
  logic [31:0]        nw_q;          // free elements per partition to write (dst's)
  logic [31:0]        grp_q;         // elements per group (R; 1 but for tensor_reduce)
  logic [31:0]        gpos_q;        // elements of the current group read
  logic               d_first_q;     // the data on the port starts its group
  logic [31:0]        rd_cnt_q;      // elements whose last read has been granted
  logic [31:0]        wr_cnt_q;      // elements written
  logic               two_q;         // two reads per element (tensor_tensor)
  logic               gen_q;         // no reads (memset)
  logic               need_s0_q;     // s0 is read in SCAL
  logic               need_s1_q;     // s1 is read in SCAL
  logic               red_q;         // dst2 is written in RED
  logic               rd_phase_q;    // two sources: next read is src1
  logic [15:0]        wait_q;        // START and RED countdown
  logic [15:0]        cyc_q;         // cycles since accept, saturating
  logic               scal_phase_q;  // SCAL: 0 reading s0, 1 reading s1
  logic               first_rd_q;    // rd_start not yet pulsed
  logic [1:0]         data_boff_q;   // byte offset of the element on the port in its word
  logic               bits_q;        // a bitvec instruction: data_o, s0_o, s1_o are bits (alu_is_bitvec)
  dtype_e             data_dt_q;
  logic [P-1:0][31:0] s0_q, s1_q;

  // ---------------------------------------------------------------------------------------
  // What an instruction reads and writes (decoded as it is taken)
  // ---------------------------------------------------------------------------------------
  function automatic logic [P-1:0] lane_mask(logic [7:0] start, logic [7:0] num);
    logic [P-1:0] m;
    for (int p = 0; p < P; p++) m[p] = (32'(p) >= 32'(start)) && (32'(p) < 32'(start) + 32'(num));
    return m;
  endfunction

  // tensor_reduce: elements per group, the product of the red_axes innermost sizes of src0.
  function automatic logic [31:0] red_group(logic [3:0][31:0] size, logic [2:0] axes);
    logic [31:0] g;
    g = size[0];
    if (axes >= 3'd2) g = g * size[1];
    if (axes >= 3'd3) g = g * size[2];
    if (axes >= 3'd4) g = g * size[3];
    return g;
  endfunction

  // Whether an instruction reads a per-partition operand (s0 with op0 and s0_vec, s1 with op1
  // and s1_vec): tensor_scalar where its op takes the vector, activation's scale and bias vectors.
  function automatic logic needs_s(opcode_e opcode, logic vec, alu_op_e op);
    return (opcode == OP_TENSOR_SCALAR && vec && op != ALU_BYPASS) || (opcode == OP_ACTIVATION && vec);
  endfunction

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
  logic use_data;  // this cycle consumes the data on the port

  assign use_data = ce_i && ((state_q == S_RUN && data_q != D_NONE) || (state_q == S_SCAL && data_q == D_SCAL));

  // Converted only in cycles that use it, so an idle or waiting engine costs one vector clear.
  // (Per-lane work stays in combinational blocks and the registers take whole vectors: loops in
  // clocked blocks would be unrolled P times.) The port is copied once into `rd` before the lane
  // loop: where the core selects the read data from several memories, Verilator would otherwise
  // evaluate that selection, P x 32 bits wide, once per lane.
  always_comb begin
    logic [P-1:0][31:0] rd;
    logic [31:0] e;
    data_o = '0;
    rd     = '0;
    e      = '0;
    if (use_data) begin
      rd = rd_data_i;
      for (int p = 0; p < P; p++) begin
        if (mask_q[p]) begin
          e = ap_elem_of_word(rd[p], data_boff_q, data_dt_q);
          data_o[p] = bits_q ? e : fp_to_f32(e, data_dt_q);
        end
      end
    end
  end

  assign insn_o    = insn_q;
  assign mask_o    = mask_q;
  assign data_boff_o = data_boff_q;
  assign bits_o      = bits_q;
  assign data_dt_o = data_dt_q;
  assign s0_o      = s0_q;
  assign s1_o      = s1_q;
  assign first_o   = d_first_q;
  assign src0_o    = ce_i && state_q == S_RUN && data_q == D_SRC0;
  assign fold_o    = ce_i && state_q == S_RUN && data_q == D_PART;
  assign elem_o    = ce_i && state_q == S_RUN && (gen_q || data_q == D_LAST);
  assign red_o     = ce_i && state_q == S_RED && wait_q <= 16'd1;

  // ---------------------------------------------------------------------------------------
  // Ports
  // ---------------------------------------------------------------------------------------
  logic want_rd, rd_fire, rd_is_src1, want_wr, wr_fire, in_red;

  always_comb begin
    want_rd    = 1'b0;
    rd_is_src1 = 1'b0;
    rd_addr_o  = s0_addr;
    rd_psum_o  = 1'b0;
    if (ce_i && state_q == S_RUN) begin
      // A new read is allowed unless it would overwrite data still waiting to be written.
      if (!gen_q && rd_cnt_q < n_q && (data_q != D_LAST || wr_gnt_i)) begin
        want_rd    = 1'b1;
        rd_is_src1 = TwoSrc && two_q && rd_phase_q;
        rd_addr_o  = rd_is_src1 ? s1_addr : s0_addr;
        rd_psum_o  = (rd_is_src1 ? insn_q.src1.mem : insn_q.src0.mem) == BUF_PSUM;
      end
    end else if (ce_i && state_q == S_SCAL && data_q == D_NONE) begin
      want_rd   = 1'b1;
      rd_addr_o = AddrW'(scal_phase_q ? insn_q.s1.offset : insn_q.s0.offset);
      rd_psum_o = (scal_phase_q ? insn_q.s1.mem : insn_q.s0.mem) == BUF_PSUM;
    end
  end

  assign rd_req_o  = want_rd;
  assign rd_mask_o = mask_q;
  assign rd_fire   = want_rd && rd_gnt_i;

  assign in_red    = state_q == S_RED;
  assign want_wr   = (ce_i && state_q == S_RUN && (gen_q ? wr_cnt_q < nw_q : data_q == D_LAST)) || red_o;
  assign wr_req_o  = want_wr;
  assign wr_addr_o = in_red ? AddrW'(insn_q.dst2.offset) : d_addr;
  assign wr_psum_o = (in_red ? insn_q.dst2.mem : insn_q.dst.mem) == BUF_PSUM;
  assign wr_mask_o = mask_q;
  assign wr_ben_o  = ap_elem_ben(in_red ? insn_q.dst2.dtype : insn_q.dst.dtype);
  assign wr_fire   = want_wr && wr_gnt_i;
  assign elem_wr_o = wr_fire && state_q == S_RUN;

  assign it_init = insn_valid_i && insn_ready_o;
  assign s0_step = rd_fire && state_q == S_RUN && !rd_is_src1;
  assign s1_step = rd_fire && state_q == S_RUN && rd_is_src1;
  assign d_step  = elem_wr_o;

  assign accept_o     = it_init;
  assign insn_ready_o = state_q == S_IDLE;
  assign busy_o       = state_q != S_IDLE;

  // ---------------------------------------------------------------------------------------
  // Control
  // ---------------------------------------------------------------------------------------
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q      <= S_IDLE;
      data_q       <= D_NONE;
      insn_q       <= '0;
      mask_q       <= '0;
      n_q          <= '0;
      nw_q         <= '0;
      grp_q        <= '0;
      gpos_q       <= '0;
      d_first_q    <= 1'b0;
      rd_cnt_q     <= '0;
      wr_cnt_q     <= '0;
      two_q        <= 1'b0;
      gen_q        <= 1'b0;
      need_s0_q    <= 1'b0;
      need_s1_q    <= 1'b0;
      red_q        <= 1'b0;
      rd_phase_q   <= 1'b0;
      wait_q       <= '0;
      cyc_q        <= '0;
      scal_phase_q <= 1'b0;
      first_rd_q   <= 1'b0;
      data_boff_q  <= 2'b0;
      bits_q       <= 1'b0;
      data_dt_q    <= DT_FP32;
      s0_q         <= '0;
      s1_q         <= '0;
      rd_start_o   <= 1'b0;
      done_o       <= 1'b0;
    end else begin
      rd_start_o <= 1'b0;
      done_o     <= 1'b0;
      if (state_q == S_IDLE) begin
        if (insn_valid_i) begin
          insn_q       <= insn_i;
          mask_q       <= lane_mask(insn_i.dst.start_part, insn_i.dst.num_part);
          if (insn_i.opcode == OP_TENSOR_REDUCE) begin
            n_q   <= ap_elems(insn_i.src0.size);
            grp_q <= red_group(insn_i.src0.size, insn_i.red_axes);
          end else begin
            n_q   <= ap_elems(insn_i.dst.size);
            grp_q <= 32'd1;
          end
          nw_q         <= ap_elems(insn_i.dst.size);
          two_q        <= TwoSrc && insn_i.opcode == OP_TENSOR_TENSOR;
          bits_q       <= insn_i.opcode inside {OP_TENSOR_TENSOR, OP_TENSOR_SCALAR, OP_TENSOR_REDUCE} &&
                          (alu_is_bitvec(insn_i.op0) ||
                           (insn_i.opcode == OP_TENSOR_SCALAR && alu_is_bitvec(insn_i.op1)));
          gen_q        <= insn_i.opcode == OP_MEMSET;
          need_s0_q    <= needs_s(insn_i.opcode, insn_i.s0_vec, insn_i.op0);
          need_s1_q    <= needs_s(insn_i.opcode, insn_i.s1_vec, insn_i.op1);
          red_q        <= HasDst2 && insn_i.dst2.num_part != 8'd0;
          gpos_q       <= '0;
          rd_cnt_q     <= '0;
          wr_cnt_q     <= '0;
          rd_phase_q   <= 1'b0;
          data_q       <= D_NONE;
          wait_q       <= 16'(StartCycles);
          cyc_q        <= '0;
          scal_phase_q <= !needs_s(insn_i.opcode, insn_i.s0_vec, insn_i.op0);
          first_rd_q   <= 1'b1;
          // the immediates in every lane; SCAL replaces them by the per-partition vectors
          s0_q         <= {P{insn_i.imm0}};
          s1_q         <= {P{insn_i.imm1}};
          state_q      <= S_START;
        end
      end else if (ce_i) begin
        if (cyc_q != '1) cyc_q <= cyc_q + 1;
        unique case (state_q)
          S_START: begin
            if (wait_q > 1)                   wait_q  <= wait_q - 1;
            else if (need_s0_q || need_s1_q)  state_q <= S_SCAL;
            else                              state_q <= S_RUN;
          end
          S_SCAL: begin
            if (data_q == D_SCAL) begin
              // Operand word on the port: capture it into the lane registers.
              if (!scal_phase_q) s0_q <= data_o;
              else               s1_q <= data_o;
              data_q <= D_NONE;
              if (!scal_phase_q && need_s1_q) scal_phase_q <= 1'b1;
              else                            state_q      <= S_RUN;
            end else if (rd_fire) begin
              data_q    <= D_SCAL;
              data_boff_q <= rd_addr_o[1:0];
              data_dt_q <= scal_phase_q ? insn_q.s1.dtype : insn_q.s0.dtype;
              if (first_rd_q) begin
                rd_start_o <= 1'b1;
                first_rd_q <= 1'b0;
              end
            end
          end
          S_RUN: begin
            if (wr_fire) wr_cnt_q <= wr_cnt_q + 1;
            if (rd_fire) begin
              if (first_rd_q) begin
                rd_start_o <= 1'b1;
                first_rd_q <= 1'b0;
              end
              data_boff_q <= rd_addr_o[1:0];
              if (two_q && !rd_is_src1) begin
                data_q    <= D_SRC0;
                data_dt_q <= insn_q.src0.dtype;
              end else begin
                // An element's last read: the group's last element is written, every other
                // one folded.
                data_q    <= (gpos_q + 1 == grp_q) ? D_LAST : D_PART;
                data_dt_q <= rd_is_src1 ? insn_q.src1.dtype : insn_q.src0.dtype;
                d_first_q <= gpos_q == '0;
                gpos_q    <= (gpos_q + 1 == grp_q) ? '0 : gpos_q + 1;
                rd_cnt_q  <= rd_cnt_q + 1;
              end
              rd_phase_q <= two_q && !rd_is_src1;
            end else if ((data_q == D_LAST && wr_fire) || data_q == D_PART) begin
              data_q <= D_NONE;
            end
            // (src0 stays on the port while the src1 read is refused.)
            if (gen_q && wr_fire && first_rd_q) begin
              rd_start_o <= 1'b1;
              first_rd_q <= 1'b0;
            end
            // Finished streaming when every element has been written.
            if ((wr_fire && wr_cnt_q + 1 == nw_q) || nw_q == 0) begin
              if (red_q) begin
                state_q <= S_RED;
                wait_q  <= 16'(RedCycles);
              end else begin
                state_q <= S_HOLD;
              end
            end
          end
          S_RED: begin
            if (wait_q > 1)   wait_q  <= wait_q - 1;
            else if (wr_fire) state_q <= S_HOLD;
          end
          S_HOLD: begin
            if (32'(cyc_q) + 1 >= MinIi) begin
              done_o  <= 1'b1;
              state_q <= S_IDLE;
            end
          end
          default: state_q <= S_IDLE;
        endcase
      end
    end
  end

  // ---------------------------------------------------------------------------------------
  // Assertions (simulation only: NCORE_ASSERT, Verilator --assert; rtl/CMakeLists.txt). A
  // failure reports through ncore_assert_fail (sim/trace/rtl_assert.hpp) and stops the run.
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_ASSERT
  import "DPI-C" function void ncore_assert_fail(input string msg);
  logic             chk_busy_q;               // an accepted instruction has not pulsed done yet
  logic             chk_rd_q, chk_wr_q;       // a request refused in the last enabled cycle
  logic             chk_rd_psum_q, chk_wr_psum_q;
  logic [AddrW-1:0] chk_rd_addr_q, chk_wr_addr_q;
  logic [3:0]       chk_wr_ben_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      chk_busy_q    <= 1'b0;
      chk_rd_q      <= 1'b0;
      chk_wr_q      <= 1'b0;
      chk_rd_psum_q <= 1'b0;
      chk_wr_psum_q <= 1'b0;
      chk_rd_addr_q <= '0;
      chk_wr_addr_q <= '0;
      chk_wr_ben_q  <= '0;
    end else begin
      chk_busy_q <= (chk_busy_q && !done_o) || accept_o;
      if (ce_i) begin
        chk_rd_q      <= rd_req_o && !rd_gnt_i;
        chk_rd_psum_q <= rd_psum_o;
        chk_rd_addr_q <= rd_addr_o;
        chk_wr_q      <= wr_req_o && !wr_gnt_i;
        chk_wr_psum_q <= wr_psum_o;
        chk_wr_addr_q <= wr_addr_o;
        chk_wr_ben_q  <= wr_ben_o;
      end
    end
  end
  // The sequencer presents an instruction only to an idle engine (it would be lost otherwise).
  // (An immediate assertion: Verilator 5.006 cannot sample a signal as wide as insn_i for a
  // concurrent one.)
  always_ff @(posedge clk_i) begin
    if (rst_ni && insn_valid_i) begin
      a_insn_idle: assert (insn_ready_o)
        else ncore_assert_fail($sformatf("%m: instruction (opcode %0d) presented while the engine is busy (state %0d)",
                                         insn_i.opcode, state_q));
    end
  end
  // Every done pulse answers one accepted instruction: none completes twice.
  a_done_once: assert property (@(posedge clk_i) disable iff (!rst_ni) done_o |-> chk_busy_q)
    else ncore_assert_fail($sformatf("%m: done pulse with no accepted instruction outstanding"));
  a_accept_idle: assert property (@(posedge clk_i) disable iff (!rst_ni) accept_o |-> !chk_busy_q || done_o)
    else ncore_assert_fail($sformatf("%m: instruction accepted before the previous one's done pulse"));
  // A refused read or write is presented again, unchanged, in the next enabled cycle.
  a_rd_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                              ce_i && chk_rd_q |-> rd_req_o && rd_addr_o == chk_rd_addr_q && rd_psum_o == chk_rd_psum_q)
    else ncore_assert_fail($sformatf("%m: refused read (addr %0h, psum %0d) not held: req %0d addr %0h psum %0d",
                                     chk_rd_addr_q, chk_rd_psum_q, rd_req_o, rd_addr_o, rd_psum_o));
  a_wr_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                              ce_i && chk_wr_q |-> wr_req_o && wr_addr_o == chk_wr_addr_q && wr_psum_o == chk_wr_psum_q &&
                                                   wr_ben_o == chk_wr_ben_q)
    else ncore_assert_fail($sformatf("%m: refused write (addr %0h, psum %0d) not held: req %0d addr %0h psum %0d",
                                     chk_wr_addr_q, chk_wr_psum_q, wr_req_o, wr_addr_o, wr_psum_o));
  // The element counters stay within the instruction's counts.
  a_counts: assert property (@(posedge clk_i) disable iff (!rst_ni)
                             state_q == S_RUN |-> rd_cnt_q <= n_q && wr_cnt_q <= nw_q)
    else ncore_assert_fail($sformatf("%m: element counters past their ends: read %0d of %0d, written %0d of %0d",
                                     rd_cnt_q, n_q, wr_cnt_q, nw_q));
  // Requests only while an instruction runs.
  a_req_busy: assert property (@(posedge clk_i) disable iff (!rst_ni) rd_req_o || wr_req_o |-> busy_o)
    else ncore_assert_fail($sformatf("%m: memory request while idle"));
`endif

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // Back-pressure on the engine's ports: a read or a write refused (the memories' arbitration).
  always_ff @(posedge clk_i) begin
    if (rst_ni && ce_i) begin
      c_rd_refused: cover (rd_req_o && !rd_gnt_i);
      c_wr_refused: cover (wr_req_o && !wr_gnt_i);
    end
  end
`endif
endmodule
