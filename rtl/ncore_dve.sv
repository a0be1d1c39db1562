// Vector engine (DVE): 128 lanes, lane p reading and writing SBUF partition p.
//
// Runs tensor_tensor, tensor_scalar, tensor_copy, memset and tensor_reduce, on operands in the
// SBUF or the PSUM (each access says which; the core routes it). Every lane converts its inputs
// to fp32, computes in fp32 (ncore_fp_pkg) and rounds once to the destination dtype. One
// instruction at a time, on the cycles its clock enable allows:
//
//   accept -> START (Cfg.DveAccessStartCycles: the documented access start overhead)
//          -> SCAL  (tensor_scalar: read the per-partition operands into lane registers)
//          -> RUN   (stream the free elements)
//          -> HOLD  (pad to Cfg.DveMinIi cycles, the documented minimum initiation interval)
//          -> done pulse
//
// RUN has one SBUF read port and one write port. Read data arrives the cycle after the grant
// and stays on the port until the next granted read, so a refused write simply retries with
// the same data while no new read is issued. A tensor_tensor element takes two reads (src0
// captured into lane registers, then src1), so it streams at one element per two cycles
// (the documented ~2N); single-input ops stream one element per cycle (~N).
//
//   cycle   read port        data on port     write port
//   c       src0[i]
//   c+1     src1[i]          src0[i] -> a_q
//   c+2     src0[i+1]        src1[i]          dst[i] = a_q op src1[i]
//
// tensor_reduce streams src0 at one element per cycle and folds each group of R consecutive
// elements (R = the product of the red_axes innermost sizes) into a_q: the group's first element
// is taken as it is, every later one as a_q = a_q op0 x (fp32, one rounding per step); the last
// one's fold is rounded once to dst.dtype and written, while the next group is already read.
// The golden model folds in the same order. Every element is consumed in the cycle after its
// read, so a fold never repeats.
module ncore_dve
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_fp_pkg::*;
#(
  parameter cfg_t         Cfg   = CfgTrn2,
  localparam int unsigned P     = Cfg.NumPartitions,
  localparam int unsigned AddrW = $clog2(Cfg.SbufBytes)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 ce_i,
  // instruction interface (from the vector engine's sequencer)
  input  logic                 insn_valid_i,
  input  insn_t                insn_i,
  output logic                 insn_ready_o,
  output logic                 rd_start_o,   // pulse: the instruction reads its first input
  output logic                 done_o,       // pulse: the instruction has written everything
  output logic                 busy_o,
  // engine read port, to the SBUF or (rd_psum_o) the PSUM
  output logic                 rd_req_o,
  output logic                 rd_psum_o,
  output logic [AddrW-1:0]     rd_addr_o,
  output logic [P-1:0]         rd_mask_o,
  input  logic                 rd_gnt_i,
  input  logic [P-1:0][31:0]   rd_data_i,
  // engine write port, to the SBUF or (wr_psum_o) the PSUM
  output logic                 wr_req_o,
  output logic                 wr_psum_o,
  output logic [AddrW-1:0]     wr_addr_o,
  output logic [P-1:0]         wr_mask_o,
  output logic [3:0]           wr_ben_o,
  output logic [P-1:0][31:0]   wr_data_o,
  input  logic                 wr_gnt_i
);
  typedef enum logic [2:0] {S_IDLE, S_START, S_SCAL, S_RUN, S_HOLD} state_e;
  // What the data on the read port belongs to (D_PART: tensor_reduce, not the last element of
  // its group).
  typedef enum logic [2:0] {D_NONE, D_SRC0, D_LAST, D_SCAL, D_PART} data_e;

  state_e         state_q;
  data_e          data_q;
  insn_t          insn_q;
  logic [P-1:0]   mask_q;
  logic [31:0]    n_q;           // free elements per partition to read (src0's; else dst's)
  logic [31:0]    nw_q;          // free elements per partition to write (dst's)
  logic [31:0]    grp_q;         // tensor_reduce: elements per group (R)
  logic [31:0]    gpos_q;        // tensor_reduce: elements of the current group read
  logic           d_first_q;     // tensor_reduce: the data on the port starts its group
  logic [31:0]    rd_cnt_q;      // elements whose last read has been granted
  logic [31:0]    wr_cnt_q;      // elements written
  logic           rd_phase_q;    // tensor_tensor: next read is src1
  logic [15:0]    wait_q;        // START countdown
  logic [15:0]    cyc_q;         // cycles since accept, saturating
  logic           scal_phase_q;  // SCAL: 0 reading s0, 1 reading s1
  logic           first_rd_q;    // rd_start not yet pulsed
  logic [P-1:0][31:0] a_q;       // tensor_tensor: src0 as fp32; tensor_reduce: the group's fold
  logic [P-1:0][31:0] o0_q, o1_q;  // tensor_scalar operands as fp32

  wire is_tt  = insn_q.opcode == OP_TENSOR_TENSOR;
  wire is_ts  = insn_q.opcode == OP_TENSOR_SCALAR;
  wire is_mem = insn_q.opcode == OP_MEMSET;
  wire is_red = insn_q.opcode == OP_TENSOR_REDUCE;

  // ---------------------------------------------------------------------------------------
  // Address generators: src0, src1, dst
  // ---------------------------------------------------------------------------------------
  logic [AddrW-1:0] s0_addr, s1_addr, d_addr;
  logic             it_init, s0_step, s1_step, d_step;
  logic [31:0]      unused_rem0 [3];
  logic             unused_last [3];

  function automatic logic [1:0] esz_log2(dtype_e dt);
    return (dtype_bytes(dt) == 3'd4) ? 2'd2 : 2'd1;
  endfunction

  ncore_ap_iter #(.AddrW(AddrW)) u_it_s0 (
    .clk_i, .rst_ni, .init_i(it_init), .base_i(AddrW'(insn_i.src0.offset)),
    .esz_log2_i(esz_log2(insn_i.src0.dtype)), .size_i(insn_i.src0.size), .stride_i(insn_i.src0.stride),
    .step_i(s0_step), .step_n_i(5'd1), .addr_o(s0_addr), .rem0_o(unused_rem0[0]), .last_o(unused_last[0]));
  ncore_ap_iter #(.AddrW(AddrW)) u_it_s1 (
    .clk_i, .rst_ni, .init_i(it_init), .base_i(AddrW'(insn_i.src1.offset)),
    .esz_log2_i(esz_log2(insn_i.src1.dtype)), .size_i(insn_i.src1.size), .stride_i(insn_i.src1.stride),
    .step_i(s1_step), .step_n_i(5'd1), .addr_o(s1_addr), .rem0_o(unused_rem0[1]), .last_o(unused_last[1]));
  ncore_ap_iter #(.AddrW(AddrW)) u_it_d (
    .clk_i, .rst_ni, .init_i(it_init), .base_i(AddrW'(insn_i.dst.offset)),
    .esz_log2_i(esz_log2(insn_i.dst.dtype)), .size_i(insn_i.dst.size), .stride_i(insn_i.dst.stride),
    .step_i(d_step), .step_n_i(5'd1), .addr_o(d_addr), .rem0_o(unused_rem0[2]), .last_o(unused_last[2]));

  // ---------------------------------------------------------------------------------------
  // Lane datapath (combinational from the read port)
  // ---------------------------------------------------------------------------------------
  // Element bits at byte address `addr` from the 32-bit word holding it.
  function automatic logic [31:0] pick(logic [31:0] word, logic hi_half, dtype_e dt);
    if (dtype_bytes(dt) == 3'd4) return word;
    return {16'b0, hi_half ? word[31:16] : word[15:0]};
  endfunction

  logic             data_hi_q;     // the data on the port is the upper half of its word (2-byte dtypes)
  dtype_e           data_dt_q;
  logic [P-1:0][31:0] result;

  // The data on the read port as fp32, per lane. Converted only on cycles that use it, so an
  // idle or waiting engine costs nothing. (Per-lane work stays in combinational blocks and
  // the registers take whole vectors: loops in clocked blocks would be unrolled 128 times.)
  logic               use_data;    // this cycle consumes the data on the port
  logic [P-1:0][31:0] cvt;         // port data as fp32
  logic               compute;     // this cycle writes a result
  logic               fold;        // tensor_reduce: this cycle folds an element into a_q
  logic [P-1:0][31:0] red;         // tensor_reduce: the group's fold including the port's element

  assign use_data = ce_i && ((state_q == S_RUN && data_q != D_NONE) || (state_q == S_SCAL && data_q == D_SCAL));
  assign compute  = ce_i && state_q == S_RUN && (is_mem || data_q == D_LAST);
  assign fold     = ce_i && state_q == S_RUN && data_q == D_PART;

  // The port is copied once into `rd` before the lane loop: where the core selects the read data
  // from several memories, Verilator would otherwise evaluate that selection, P x 32 bits wide,
  // once per lane.
  always_comb begin
    logic [P-1:0][31:0] rd;
    cvt = '0;
    rd  = '0;
    if (use_data) begin
      rd = rd_data_i;
      for (int p = 0; p < P; p++) begin
        if (mask_q[p]) cvt[p] = fp_to_f32(pick(rd[p], data_hi_q, data_dt_q), data_dt_q);
      end
    end
  end

  // tensor_scalar operands: the per-partition value read into the lane registers, or the
  // instruction's fp32 immediate.
  wire ts_vec0 = insn_q.s0_vec && insn_q.op0 != ALU_BYPASS;
  wire ts_vec1 = insn_q.s1_vec && insn_q.op1 != ALU_BYPASS;

  always_comb begin
    red = '0;
    if (is_red && (fold || compute)) begin
      for (int p = 0; p < P; p++) begin
        if (mask_q[p]) begin
          if (d_first_q) red[p] = cvt[p];
          else           red[p] = fp_alu(insn_q.op0, a_q[p], cvt[p]);
        end
      end
    end
  end

  always_comb begin
    logic [31:0] x, r, s0, s1;
    logic [P-1:0][31:0] rd;  // the port, for bit copies (once, as for cvt)
    x  = '0;
    r  = '0;
    s0 = '0;
    s1 = '0;
    rd = '0;
    result = '0;
    if (compute && insn_q.opcode == OP_TENSOR_COPY) rd = rd_data_i;
    if (compute) begin
      for (int p = 0; p < P; p++) begin
        if (mask_q[p]) begin
          x = cvt[p];
          if (is_mem) begin
            r = insn_q.imm0;
          end else if (is_tt) begin
            r = fp_alu(insn_q.op0, a_q[p], x);
          end else if (is_red) begin
            r = red[p];
          end else if (is_ts) begin
            s0 = ts_vec0 ? o0_q[p] : insn_q.imm0;
            s1 = ts_vec1 ? o1_q[p] : insn_q.imm1;
            r = (insn_q.op0 == ALU_BYPASS) ? x :
                insn_q.rev0 ? fp_alu(insn_q.op0, s0, x) : fp_alu(insn_q.op0, x, s0);
            r = (insn_q.op1 == ALU_BYPASS) ? r :
                insn_q.rev1 ? fp_alu(insn_q.op1, s1, r) : fp_alu(insn_q.op1, r, s1);
          end else begin
            r = x;  // tensor_copy
          end
          // tensor_copy between equal dtypes is a bit copy; everything else rounds once.
          if (insn_q.opcode == OP_TENSOR_COPY && insn_q.dst.dtype == data_dt_q) begin
            result[p] = pick(rd[p], data_hi_q, data_dt_q);
          end else begin
            result[p] = fp_from_f32(r, insn_q.dst.dtype);
          end
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------
  // Control
  // ---------------------------------------------------------------------------------------
  logic want_wr, wr_fire, want_rd, rd_fire, rd_is_src1;

  always_comb begin
    want_wr    = 1'b0;
    want_rd    = 1'b0;
    rd_is_src1 = 1'b0;
    rd_addr_o  = s0_addr;
    rd_psum_o  = 1'b0;
    if (ce_i && state_q == S_RUN) begin
      want_wr = is_mem ? (wr_cnt_q < nw_q) : (data_q == D_LAST);
      // A new read is allowed unless it would overwrite data still waiting to be written.
      if (!is_mem && rd_cnt_q < n_q && (data_q != D_LAST || wr_gnt_i)) begin
        want_rd    = 1'b1;
        rd_is_src1 = is_tt && rd_phase_q;
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
  assign wr_req_o  = want_wr;
  assign wr_addr_o = d_addr;
  assign wr_psum_o = insn_q.dst.mem == BUF_PSUM;
  assign wr_mask_o = mask_q;
  assign wr_ben_o  = (dtype_bytes(insn_q.dst.dtype) == 3'd4) ? 4'b1111 : 4'b0011;
  assign wr_fire   = want_wr && wr_gnt_i;

  // The SBUF samples the write data at the grant, in the cycle it is computed.
  assign wr_data_o = result;

  assign it_init = insn_valid_i && insn_ready_o;
  assign s0_step = rd_fire && state_q == S_RUN && !rd_is_src1;
  assign s1_step = rd_fire && state_q == S_RUN && rd_is_src1;
  assign d_step  = wr_fire;

  assign insn_ready_o = state_q == S_IDLE;
  assign busy_o       = state_q != S_IDLE;

  function automatic logic [31:0] free_elems(logic [3:0][31:0] size);
    return size[0] * size[1] * size[2] * size[3];
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

  function automatic logic [P-1:0] lane_mask(logic [7:0] start, logic [7:0] num);
    logic [P-1:0] m;
    for (int p = 0; p < P; p++) m[p] = (32'(p) >= 32'(start)) && (32'(p) < 32'(start) + 32'(num));
    return m;
  endfunction


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
      rd_phase_q   <= 1'b0;
      wait_q       <= '0;
      cyc_q        <= '0;
      scal_phase_q <= 1'b0;
      first_rd_q   <= 1'b0;
      data_hi_q    <= 1'b0;
      data_dt_q    <= DT_FP32;
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
            n_q   <= free_elems(insn_i.src0.size);
            grp_q <= red_group(insn_i.src0.size, insn_i.red_axes);
          end else begin
            n_q   <= free_elems(insn_i.dst.size);
            grp_q <= 32'd1;
          end
          nw_q         <= free_elems(insn_i.dst.size);
          gpos_q       <= '0;
          rd_cnt_q     <= '0;
          wr_cnt_q     <= '0;
          rd_phase_q   <= 1'b0;
          data_q       <= D_NONE;
          wait_q       <= 16'(Cfg.DveAccessStartCycles);
          cyc_q        <= '0;
          scal_phase_q <= !(insn_i.s0_vec && insn_i.op0 != ALU_BYPASS);
          first_rd_q   <= 1'b1;
          state_q      <= S_START;
        end
      end else if (ce_i) begin
        if (cyc_q != '1) cyc_q <= cyc_q + 1;
        unique case (state_q)
          S_START: begin
            if (wait_q > 1) begin
              wait_q <= wait_q - 1;
            end else if (is_ts && (ts_vec0 || ts_vec1)) begin
              state_q <= S_SCAL;
            end else begin
              state_q <= S_RUN;
            end
          end
          S_SCAL: begin
            if (data_q == D_SCAL) begin
              // Operand word on the port: capture it into the lane registers.
              if (!scal_phase_q) o0_q <= cvt;
              else               o1_q <= cvt;
              data_q <= D_NONE;
              if (!scal_phase_q && ts_vec1) scal_phase_q <= 1'b1;
              else                          state_q <= S_RUN;
            end else if (rd_fire) begin
              data_q      <= D_SCAL;
              data_hi_q <= rd_addr_o[1];
              data_dt_q   <= scal_phase_q ? insn_q.s1.dtype : insn_q.s0.dtype;
              if (first_rd_q) begin
                rd_start_o <= 1'b1;
                first_rd_q <= 1'b0;
              end
            end
          end
          S_RUN: begin
            if (data_q == D_SRC0) begin
              a_q <= cvt;
            end
            if (data_q == D_PART) begin
              a_q <= red;
            end
            if (wr_fire) wr_cnt_q <= wr_cnt_q + 1;
            if (rd_fire) begin
              if (first_rd_q) begin
                rd_start_o <= 1'b1;
                first_rd_q <= 1'b0;
              end
              data_hi_q <= rd_addr_o[1];
              if (is_red) begin
                // The group's last element is written, every other one folded.
                data_q    <= (gpos_q + 1 == grp_q) ? D_LAST : D_PART;
                data_dt_q <= insn_q.src0.dtype;
                d_first_q <= gpos_q == '0;
                gpos_q    <= (gpos_q + 1 == grp_q) ? '0 : gpos_q + 1;
                rd_cnt_q  <= rd_cnt_q + 1;
              end else if (rd_is_src1 || !is_tt) begin
                data_q    <= D_LAST;
                data_dt_q <= rd_is_src1 ? insn_q.src1.dtype : insn_q.src0.dtype;
                rd_cnt_q  <= rd_cnt_q + 1;
              end else begin
                data_q    <= D_SRC0;
                data_dt_q <= insn_q.src0.dtype;
              end
              rd_phase_q <= is_tt && !rd_is_src1;
            end else if ((data_q == D_LAST && wr_fire) || data_q == D_PART) begin
              data_q <= D_NONE;
            end else if (data_q == D_SRC0) begin
              data_q <= D_SRC0;  // src1 read refused: keep src0 on the port
            end
            if (is_mem && wr_fire && first_rd_q) begin
              rd_start_o <= 1'b1;
              first_rd_q <= 1'b0;
            end
            // Finished when every element has been written.
            if ((wr_fire && wr_cnt_q + 1 == nw_q) || nw_q == 0) state_q <= S_HOLD;
          end
          S_HOLD: begin
            if (32'(cyc_q) + 1 >= Cfg.DveMinIi) begin
              done_o  <= 1'b1;
              state_q <= S_IDLE;
            end
          end
          default: state_q <= S_IDLE;
        endcase
      end
    end
  end
endmodule
