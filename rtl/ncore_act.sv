// Scalar (activation) engine (ACT): 128 lanes, lane p reading and writing partition p.
//
// Runs `activation`: dst = func(src0 * scale + bias), with the scale an fp32 immediate (imm0) or
// a per-partition (P,1) vector (s0), the bias an immediate (imm1) or a per-partition vector (s1),
// and optionally the add-reduce of func's outputs along the free axis into a (P,1) result dst2
// (NKI activation_reduce / reduce_res). Operands are in the SBUF or the PSUM; each access says
// which (the requests' psum) and the core routes it, as for the vector engine. Every lane
// widens its input to fp32 exactly and computes in fp32 (ncore_fp_pkg) in this order, which the
// golden model (tb/golden) follows bit for bit:
//
//   x    = src0 element as fp32        exact; any NaN becomes the canonical NaN
//   y    = x * scale                   fp32, round to nearest even
//   z    = y + bias                    fp32, round to nearest even
//   f    = func(z)                     fp_act (ncore_fp_pkg): copy f = z; relu f = max(z, +0)
//                                      with the ALU's max rule (relu(-0) = +0, relu(NaN) = NaN);
//                                      sqrt, rsqrt, reciprocal, square correctly rounded; abs,
//                                      negative, sign exact; exp, log, tanh, sigmoid, silu,
//                                      softplus, gelu, gelu_apprx_tanh, erf the model's fixed
//                                      fp32 sequences
//   dst  = f rounded once to dst.dtype (RNE, NaN canonical)
//   acc  = acc + f                     fp32, RNE, from acc = +0, elements in access-pattern order
//   dst2 = acc rounded once to dst2.dtype
//
// An immediate scale of exactly +1.0 skips the multiply, and an immediate bias of -0.0 (the ISA's
// "no bias", the additive identity) skips the add: both are exact identities of IEEE arithmetic
// (NaNs are canonical already), so the bits are the same and the lanes save the work.
//
// The memory-access front end it shares with the vector engine (ncore_eng_front) takes one
// instruction at a time, walks its operands, issues the reads and the writes and paces it on the
// cycles the engine's clock enable allows (the scalar engine's clock, Cfg.ActCeNum/ActCeDen of
// the master clock); this module holds the lanes' arithmetic and the accumulators:
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
`include "ncore_assert.svh"

module ncore_act
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_mem_pkg::*;
  import ncore_fp_pkg::*;
#(
  parameter cfg_t         Cfg   = CfgTrn2,
  localparam int unsigned P     = Cfg.NumPartitions
) (
  // clock, reset and clock enable; the instruction port (from the scalar engine's sequencer); the
  // engine read and write ports (ncore_mem_pkg), each access to the SBUF or (psum) the PSUM
`include "ncore_lane_ports.svh"
);
  localparam logic [31:0] F32NegZero = 32'h8000_0000;

  insn_t              insn;      // the instruction taken (ncore_eng_front)
  logic [P-1:0]       mask;      // its lanes
  logic               accept;    // an instruction is taken at this edge
  logic [P-1:0][31:0] cvt;       // the data on the read port as fp32
  logic [P-1:0][31:0] scale, bias;  // per lane, fp32: the vectors or the immediates
  logic               compute;   // this cycle computes (and offers to write) an element
  logic               elem_wr;   // ... and its write is granted
  logic               red_wr;    // this cycle offers the (P,1) add-reduce result to the write port
  logic [1:0]         unused_data_boff;
  logic               unused_bits;
  logic               unused_src0, unused_fold, unused_first;
  dtype_e             unused_data_dt;
  logic               mul_q;     // multiply by the scale (not the immediate +1.0)
  logic               add_q;     // add the bias (not the immediate -0.0)
  logic               red_q;     // add-reduce into dst2
  logic               func_q;    // func is not copy
  act_func_e          fn_q;      // the function
  logic [P-1:0][31:0] acc_q;     // add-reduce accumulators, fp32
  logic [P-1:0][31:0] acc_d;     // accumulators once this cycle's element is added
  logic [P-1:0][31:0] result;    // write data

  // Operands, ports, pacing (with the RED phase of dst2): the lanes see one element at a time.
  ncore_eng_front #(
    .Cfg(Cfg), .StartCycles(Cfg.ActAccessStartCycles), .MinIi(Cfg.ActMinIi), .HasDst2(1'b1),
    .RedCycles(Cfg.ActReduceCycles)
  ) u_front (
    .clk_i, .rst_ni, .ce_i, .insn_valid_i, .insn_i, .insn_ready_o, .rd_start_o, .done_o, .busy_o,
    .rd_req_o, .rd_rsp_i, .wr_req_o, .wr_rsp_i, .wr_data_i(result),
    .insn_o(insn), .mask_o(mask), .accept_o(accept), .data_o(cvt), .data_boff_o(unused_data_boff), .bits_o(unused_bits),
    .data_dt_o(unused_data_dt), .s0_o(scale), .s1_o(bias), .src0_o(unused_src0), .fold_o(unused_fold),
    .first_o(unused_first), .elem_o(compute), .elem_wr_o(elem_wr), .red_o(red_wr));

  // ---------------------------------------------------------------------------------------
  // Lane datapath (combinational from the read port). Work only in cycles that use it: an idle
  // or waiting engine costs one vector clear. (Per-lane work stays in combinational blocks and
  // the registers take whole vectors: loops in clocked blocks would be unrolled P times.)
  // ---------------------------------------------------------------------------------------
  always_comb begin
    logic [31:0] y, z;
    result = '0;
    acc_d  = '0;
    y = '0;
    z = '0;
    if (compute) begin
      for (int p = 0; p < P; p++) begin
        if (mask[p]) begin
          // (ifs, not ?: - Verilator would evaluate both arms' function calls.)
          y = cvt[p];
          if (mul_q) y = f32_mul(y, scale[p]);
          z = y;
          if (add_q) z = f32_add(z, bias[p]);
          if (func_q) z = fp_act(fn_q, z);
          result[p] = fp_from_f32(z, insn.dst.dtype);
          if (red_q) acc_d[p] = f32_add(acc_q[p], z);
        end
      end
    end else if (red_wr) begin
      for (int p = 0; p < P; p++) begin
        if (mask[p]) result[p] = fp_from_f32(acc_q[p], insn.dst2.dtype);
      end
    end
  end

  // The engine runs activation only; an element and the add-reduce result are never offered in
  // one cycle, and the result only for an instruction with dst2.
  `ASSERT_WIDE(a_opcode, !accept || insn_i.opcode == OP_ACTIVATION,
               $sformatf("opcode %0d taken by the scalar engine", insn_i.opcode))
  `ASSERT_NEVER(a_elem_or_red, compute && red_wr, "an element and the add-reduce result offered in one cycle")
  `ASSERT_IF(a_red_dst2, red_q, red_wr, "add-reduce result offered for an instruction without dst2")

  // The accumulators take an element when its write is granted, so a retry never adds it twice.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      mul_q  <= 1'b0;
      add_q  <= 1'b0;
      red_q  <= 1'b0;
      func_q <= 1'b0;
      fn_q   <= ACT_FUNC_COPY;
      acc_q  <= '0;
    end else if (accept) begin
      mul_q  <= insn_i.s0_vec || insn_i.imm0 != F32One;
      add_q  <= insn_i.s1_vec || insn_i.imm1 != F32NegZero;
      red_q  <= insn_i.dst2.num_part != 8'd0;
      func_q <= insn_i.func != ACT_FUNC_COPY;
      fn_q   <= insn_i.func;
      acc_q  <= '0;  // +0
    end else if (elem_wr && red_q) begin
      acc_q  <= acc_d;
    end
  end

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // activation x destination dtype; its functions, per-partition scale and bias, the add-reduce
  // result dst2, operands in the PSUM; sampled as an instruction is taken (accept).
  // (Bins are written out one per label: Verilator's coverage file merges the instances of a
  // generate loop into one point.)
  always_ff @(posedge clk_i) begin
    if (rst_ni && accept) begin
      `COVER_DTYPES(c_activation, insn_i.opcode == OP_ACTIVATION, insn_i.dst.dtype)
      c_activation_int:  cover (insn_i.opcode == OP_ACTIVATION && insn_i.dst.dtype >= DT_INT8);
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_ni && accept) begin
      c_relu:     cover (insn_i.func == ACT_FUNC_RELU);
      c_copy:     cover (insn_i.func == ACT_FUNC_COPY);
      c_scale_vec: cover (insn_i.s0_vec);
      c_bias_vec: cover (insn_i.s1_vec);
      c_dst2:     cover (insn_i.dst2.num_part != 8'd0);
      c_src_psum: cover (insn_i.src0.mem == BUF_PSUM);
      c_dst_psum: cover (insn_i.dst.mem == BUF_PSUM);
    end
  end
`endif
endmodule
