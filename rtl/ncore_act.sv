// Scalar (activation) engine (ACT): 128 lanes, lane p reading and writing partition p.
//
// Runs `activation`: dst = func(src0 * scale + bias), with the scale an fp32 immediate (imm0) or
// a per-partition (P,1) vector (s0), the bias an immediate (imm1) or a per-partition vector (s1),
// and optionally the add-reduce of func's outputs along the free axis into a (P,1) result dst2
// (NKI activation_reduce / reduce_res). Operands are in the SBUF or the PSUM; each access says
// which (rd_psum_o, wr_psum_o) and the core routes it, as for the vector engine. Every lane
// widens its input to fp32 exactly and computes in fp32 (ncore_fp_pkg) in this order, which the
// golden model (tb/golden) follows bit for bit:
//
//   x    = src0 element as fp32        exact; any NaN becomes the canonical NaN
//   y    = x * scale                   fp32, round to nearest even
//   z    = y + bias                    fp32, round to nearest even
//   f    = func(z)                     exact: copy f = z; relu f = max(z, +0) with the ALU's max
//                                      rule: relu(-0) = +0, relu(-inf) = +0, relu(NaN) = NaN
//   dst  = f rounded once to dst.dtype (RNE, NaN canonical)
//   acc  = acc + f                     fp32, RNE, from acc = +0, elements in access-pattern order
//   dst2 = acc rounded once to dst2.dtype
//
// An immediate scale of exactly +1.0 skips the multiply, and an immediate bias of -0.0 (the ISA's
// "no bias", the additive identity) skips the add: both are exact identities of IEEE arithmetic
// (NaNs are canonical already), so the bits are the same and the lanes save the work.
//
// One instruction at a time, on the cycles its clock enable allows (the scalar engine's clock,
// Cfg.ActCeNum/ActCeDen of the master clock):
//
//   accept -> START (Cfg.ActAccessStartCycles: the documented access start overhead)
//          -> SCAL  (per-partition scale, then bias: one read and one capture cycle each)
//          -> RUN   (stream the free elements, one per lane per cycle)
//          -> RED   (with dst2: Cfg.ActReduceCycles, the documented read-out of the
//                    accumulators; the last of them writes the (P,1) result)
//          -> HOLD  (pad to Cfg.ActMinIi cycles, the documented minimum initiation interval)
//          -> done pulse
//
// RUN has one read port and one write port with the vector engine's protocol: read data arrives
// the cycle after the grant and stays on the port until the next granted read; the result is
// computed from it in that cycle and presented to the write port; a refused write retries with
// the same data while no new read is issued. The accumulators take an element when its write is
// granted, so a retry never adds it twice.
//
//   cycle   read port     data on port     write port
//   c       src0[i]
//   c+1     src0[i+1]     src0[i]          dst[i] = func(src0[i] * scale + bias); acc += f[i]
//   c+2     src0[i+2]     src0[i+1]        dst[i+1]
//
// The per-partition operands are read before anything is written and dst2 after all of dst, so
// they may sit anywhere, the destinations included.
module ncore_act
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
  // instruction interface (from the scalar engine's sequencer)
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
  typedef enum logic [2:0] {S_IDLE, S_START, S_SCAL, S_RUN, S_RED, S_HOLD} state_e;
  // What the data on the read port belongs to.
  typedef enum logic [1:0] {D_NONE, D_ELEM, D_SCAL} data_e;

  localparam logic [31:0] F32One     = 32'h3F80_0000;
  localparam logic [31:0] F32NegZero = 32'h8000_0000;

  state_e             state_q;
  data_e              data_q;
  insn_t              insn_q;
  logic [P-1:0]       mask_q;
  logic [31:0]        n_q;           // free elements per partition
  logic [31:0]        rd_cnt_q;      // elements read
  logic [31:0]        wr_cnt_q;      // elements written
  logic [15:0]        wait_q;        // START and RED countdown
  logic [15:0]        cyc_q;         // cycles since accept, saturating
  logic               scal_phase_q;  // SCAL: 0 reading the scale, 1 the bias
  logic               first_rd_q;    // rd_start not yet pulsed
  logic               mul_q;         // multiply by the scale (not the immediate +1.0)
  logic               add_q;         // add the bias (not the immediate -0.0)
  logic               red_q;         // add-reduce into dst2
  logic               relu_q;        // func is relu (every other code: copy)
  logic               data_hi_q;     // the data on the port is the upper half of its word
  dtype_e             data_dt_q;
  logic [P-1:0][31:0] scale_q, bias_q;  // per-lane scale and bias, fp32
  logic [P-1:0][31:0] acc_q;            // add-reduce accumulators, fp32

  // ---------------------------------------------------------------------------------------
  // Address generators: src0, dst (dst2 is one element per partition, at its offset)
  // ---------------------------------------------------------------------------------------
  logic [AddrW-1:0] s_addr, d_addr;
  logic             it_init, s_step, d_step;
  logic [31:0]      unused_rem0 [2];
  logic             unused_last [2];

  function automatic logic [1:0] esz_log2(dtype_e dt);
    return (dtype_bytes(dt) == 3'd4) ? 2'd2 : 2'd1;
  endfunction

  ncore_ap_iter #(.AddrW(AddrW)) u_it_s (
    .clk_i, .rst_ni, .init_i(it_init), .base_i(AddrW'(insn_i.src0.offset)),
    .esz_log2_i(esz_log2(insn_i.src0.dtype)), .size_i(insn_i.src0.size), .stride_i(insn_i.src0.stride),
    .step_i(s_step), .step_n_i(5'd1), .addr_o(s_addr), .rem0_o(unused_rem0[0]), .last_o(unused_last[0]));
  ncore_ap_iter #(.AddrW(AddrW)) u_it_d (
    .clk_i, .rst_ni, .init_i(it_init), .base_i(AddrW'(insn_i.dst.offset)),
    .esz_log2_i(esz_log2(insn_i.dst.dtype)), .size_i(insn_i.dst.size), .stride_i(insn_i.dst.stride),
    .step_i(d_step), .step_n_i(5'd1), .addr_o(d_addr), .rem0_o(unused_rem0[1]), .last_o(unused_last[1]));

  // ---------------------------------------------------------------------------------------
  // Lane datapath (combinational from the read port)
  // ---------------------------------------------------------------------------------------
  // Element bits from the 32-bit word holding them.
  function automatic logic [31:0] pick(logic [31:0] word, logic hi_half, dtype_e dt);
    if (dtype_bytes(dt) == 3'd4) return word;
    return {16'b0, hi_half ? word[31:16] : word[15:0]};
  endfunction

  logic               use_data;  // this cycle consumes the data on the port
  logic               compute;   // this cycle computes (and offers to write) an element
  logic               red_wr;    // this cycle offers the (P,1) add-reduce result to the write port
  logic [P-1:0][31:0] cvt;       // port data as fp32
  logic [P-1:0][31:0] result;    // write data
  logic [P-1:0][31:0] acc_d;     // accumulators once this cycle's element is added

  assign use_data = ce_i && ((state_q == S_RUN && data_q == D_ELEM) || (state_q == S_SCAL && data_q == D_SCAL));
  assign compute  = ce_i && state_q == S_RUN && data_q == D_ELEM;
  assign red_wr   = ce_i && state_q == S_RED && wait_q <= 16'd1;

  // Work only in cycles that use it: an idle or waiting engine costs one vector clear. (Per-lane
  // work stays in combinational blocks and the registers take whole vectors: loops in clocked
  // blocks would be unrolled P times.) The port is copied once into `rd` before the lane loop:
  // where the core selects the read data from several memories, Verilator would otherwise
  // evaluate that selection, P x 32 bits wide, once per lane.
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

  always_comb begin
    logic [31:0] y, z;
    result = '0;
    acc_d  = '0;
    y = '0;
    z = '0;
    if (compute) begin
      for (int p = 0; p < P; p++) begin
        if (mask_q[p]) begin
          // (ifs, not ?: - Verilator would evaluate both arms' function calls.)
          y = cvt[p];
          if (mul_q) y = f32_mul(y, scale_q[p]);
          z = y;
          if (add_q) z = f32_add(z, bias_q[p]);
          if (relu_q) z = f32_max(z, 32'd0);
          result[p] = fp_from_f32(z, insn_q.dst.dtype);
          if (red_q) acc_d[p] = f32_add(acc_q[p], z);
        end
      end
    end else if (red_wr) begin
      for (int p = 0; p < P; p++) begin
        if (mask_q[p]) result[p] = fp_from_f32(acc_q[p], insn_q.dst2.dtype);
      end
    end
  end

  // ---------------------------------------------------------------------------------------
  // Ports
  // ---------------------------------------------------------------------------------------
  logic want_wr, wr_fire, want_rd, rd_fire;

  always_comb begin
    want_rd   = 1'b0;
    rd_addr_o = s_addr;
    rd_psum_o = 1'b0;
    if (ce_i && state_q == S_RUN) begin
      // A new read is allowed unless it would overwrite data still waiting to be written.
      if (rd_cnt_q < n_q && (data_q != D_ELEM || wr_gnt_i)) begin
        want_rd   = 1'b1;
        rd_psum_o = insn_q.src0.mem == BUF_PSUM;
      end
    end else if (ce_i && state_q == S_SCAL && data_q == D_NONE) begin
      want_rd   = 1'b1;
      rd_addr_o = AddrW'(scal_phase_q ? insn_q.s1.offset : insn_q.s0.offset);
      rd_psum_o = (scal_phase_q ? insn_q.s1.mem : insn_q.s0.mem) == BUF_PSUM;
    end
  end

  wire    in_red  = state_q == S_RED;
  dtype_e wr_dt;
  assign wr_dt     = in_red ? insn_q.dst2.dtype : insn_q.dst.dtype;
  assign want_wr   = compute || red_wr;
  assign wr_req_o  = want_wr;
  assign wr_addr_o = in_red ? AddrW'(insn_q.dst2.offset) : d_addr;
  assign wr_psum_o = (in_red ? insn_q.dst2.mem : insn_q.dst.mem) == BUF_PSUM;
  assign wr_mask_o = mask_q;
  assign wr_ben_o  = (dtype_bytes(wr_dt) == 3'd4) ? 4'b1111 : 4'b0011;
  assign wr_data_o = result;  // sampled at the grant, in the cycle it is computed
  assign wr_fire   = want_wr && wr_gnt_i;

  assign rd_req_o  = want_rd;
  assign rd_mask_o = mask_q;
  assign rd_fire   = want_rd && rd_gnt_i;

  assign it_init = insn_valid_i && insn_ready_o;
  assign s_step  = rd_fire && state_q == S_RUN;
  assign d_step  = wr_fire && state_q == S_RUN;

  assign insn_ready_o = state_q == S_IDLE;
  assign busy_o       = state_q != S_IDLE;

  function automatic logic [P-1:0] lane_mask(logic [7:0] start, logic [7:0] num);
    logic [P-1:0] m;
    for (int p = 0; p < P; p++) m[p] = (32'(p) >= 32'(start)) && (32'(p) < 32'(start) + 32'(num));
    return m;
  endfunction

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
      rd_cnt_q     <= '0;
      wr_cnt_q     <= '0;
      wait_q       <= '0;
      cyc_q        <= '0;
      scal_phase_q <= 1'b0;
      first_rd_q   <= 1'b0;
      mul_q        <= 1'b0;
      add_q        <= 1'b0;
      red_q        <= 1'b0;
      relu_q       <= 1'b0;
      data_hi_q    <= 1'b0;
      data_dt_q    <= DT_FP32;
      scale_q      <= '0;
      bias_q       <= '0;
      acc_q        <= '0;
      rd_start_o   <= 1'b0;
      done_o       <= 1'b0;
    end else begin
      rd_start_o <= 1'b0;
      done_o     <= 1'b0;
      if (state_q == S_IDLE) begin
        if (insn_valid_i) begin
          insn_q       <= insn_i;
          mask_q       <= lane_mask(insn_i.dst.start_part, insn_i.dst.num_part);
          n_q          <= insn_i.dst.size[0] * insn_i.dst.size[1] * insn_i.dst.size[2] * insn_i.dst.size[3];
          rd_cnt_q     <= '0;
          wr_cnt_q     <= '0;
          data_q       <= D_NONE;
          wait_q       <= 16'(Cfg.ActAccessStartCycles);
          cyc_q        <= '0;
          scal_phase_q <= !insn_i.s0_vec;
          first_rd_q   <= 1'b1;
          mul_q        <= insn_i.s0_vec || insn_i.imm0 != F32One;
          add_q        <= insn_i.s1_vec || insn_i.imm1 != F32NegZero;
          red_q        <= insn_i.dst2.num_part != 8'd0;
          relu_q       <= insn_i.func == ACT_FUNC_RELU;
          // immediates in every lane; SCAL replaces them by the per-partition vectors
          scale_q      <= {P{insn_i.imm0}};
          bias_q       <= {P{insn_i.imm1}};
          acc_q        <= '0;  // +0
          state_q      <= S_START;
        end
      end else if (ce_i) begin
        if (cyc_q != '1) cyc_q <= cyc_q + 1;
        unique case (state_q)
          S_START: begin
            if (wait_q > 1) wait_q <= wait_q - 1;
            else if (insn_q.s0_vec || insn_q.s1_vec) state_q <= S_SCAL;
            else state_q <= S_RUN;
          end
          S_SCAL: begin
            if (data_q == D_SCAL) begin
              // Operand word on the port: capture it into the lane registers.
              if (!scal_phase_q) scale_q <= cvt;
              else               bias_q <= cvt;
              data_q <= D_NONE;
              if (!scal_phase_q && insn_q.s1_vec) scal_phase_q <= 1'b1;
              else                                state_q <= S_RUN;
            end else if (rd_fire) begin
              data_q    <= D_SCAL;
              data_hi_q <= rd_addr_o[1];
              data_dt_q <= scal_phase_q ? insn_q.s1.dtype : insn_q.s0.dtype;
              if (first_rd_q) begin
                rd_start_o <= 1'b1;
                first_rd_q <= 1'b0;
              end
            end
          end
          S_RUN: begin
            if (wr_fire) begin
              wr_cnt_q <= wr_cnt_q + 1;
              if (red_q) acc_q <= acc_d;
            end
            if (rd_fire) begin
              if (first_rd_q) begin
                rd_start_o <= 1'b1;
                first_rd_q <= 1'b0;
              end
              data_q    <= D_ELEM;
              data_hi_q <= rd_addr_o[1];
              data_dt_q <= insn_q.src0.dtype;
              rd_cnt_q  <= rd_cnt_q + 1;
            end else if (wr_fire) begin
              data_q <= D_NONE;
            end
            // Finished streaming when every element has been written.
            if ((wr_fire && wr_cnt_q + 1 == n_q) || n_q == 0) begin
              if (red_q) begin
                state_q <= S_RED;
                wait_q  <= 16'(Cfg.ActReduceCycles);
              end else begin
                state_q <= S_HOLD;
              end
            end
          end
          S_RED: begin
            if (wait_q > 1) wait_q <= wait_q - 1;
            else if (wr_fire) state_q <= S_HOLD;
          end
          S_HOLD: begin
            if (32'(cyc_q) + 1 >= Cfg.ActMinIi) begin
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
