// Vector engine (DVE): 128 lanes, lane p reading and writing SBUF partition p.
//
// Runs tensor_tensor, tensor_scalar, tensor_copy, memset and tensor_reduce, on operands in the
// SBUF or the PSUM (each access says which; the core routes it). Every lane converts its inputs
// to fp32, computes in fp32 (ncore_fp_pkg) and rounds once to the destination dtype. The
// memory-access front end it shares with the scalar engine (ncore_eng_front) takes one
// instruction at a time, walks its operands, issues the reads and the writes and paces it on the
// cycles the engine's clock enable allows; this module holds the lanes' arithmetic:
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
`include "ncore_assert.svh"

module ncore_dve
  import ncore_isa_pkg::*;
  import ncore_cfg_pkg::*;
  import ncore_mem_pkg::*;
  import ncore_fp_pkg::*;
  import ncore_ap_pkg::*;
#(
  parameter cfg_t         Cfg   = CfgTrn2,
  localparam int unsigned P     = Cfg.NumPartitions
) (
  // clock, reset and clock enable; the instruction port (from the vector engine's sequencer); the
  // engine read and write ports (ncore_mem_pkg), each access to the SBUF or (psum) the PSUM
`include "ncore_lane_ports.svh"
);
  insn_t              insn;          // the instruction taken (ncore_eng_front)
  logic [P-1:0]       mask;          // its lanes
  logic [P-1:0][31:0] cvt;           // the data on the read port as fp32
  logic [1:0]         data_boff;     // ... its byte offset in its word (1- and 2-byte dtypes)
  dtype_e             data_dt;       // ... its dtype
  logic               bits;          // a bitvec op: cvt, o0, o1 and the result are bits, not fp32
  logic [P-1:0][31:0] o0, o1;        // tensor_scalar operands as fp32 (vectors or immediates)
  logic               src0, fold, first, compute;
  logic               unused_accept, unused_elem_wr, unused_red;
  logic [P-1:0][31:0] a_q;           // tensor_tensor: src0 as fp32; tensor_reduce: the group's fold
  logic [P-1:0][31:0] red;           // tensor_reduce: the group's fold including the port's element
  logic [P-1:0][31:0] result;

  // Operands, ports, pacing: the lanes see one element at a time (compute), src0 of a
  // tensor_tensor element to hold (src0) and a tensor_reduce element to fold (fold).
  ncore_eng_front #(
    .Cfg(Cfg), .StartCycles(Cfg.DveAccessStartCycles), .MinIi(Cfg.DveMinIi), .TwoSrc(1'b1)
  ) u_front (
    .clk_i, .rst_ni, .ce_i, .insn_valid_i, .insn_i, .insn_ready_o, .rd_start_o, .done_o, .busy_o,
    .rd_req_o, .rd_rsp_i, .wr_req_o, .wr_rsp_i, .wr_data_i(result),
    .insn_o(insn), .mask_o(mask), .accept_o(unused_accept), .data_o(cvt), .data_boff_o(data_boff), .bits_o(bits),
    .data_dt_o(data_dt), .s0_o(o0), .s1_o(o1), .src0_o(src0), .fold_o(fold), .first_o(first),
    .elem_o(compute), .elem_wr_o(unused_elem_wr), .red_o(unused_red));

  wire is_tt  = insn.opcode == OP_TENSOR_TENSOR;
  wire is_ts  = insn.opcode == OP_TENSOR_SCALAR;
  wire is_mem = insn.opcode == OP_MEMSET;
  wire is_red = insn.opcode == OP_TENSOR_REDUCE;

  // ---------------------------------------------------------------------------------------
  // Lane datapath (combinational from the read port). Per-lane work stays in combinational
  // blocks and the registers take whole vectors: loops in clocked blocks would be unrolled.
  // ---------------------------------------------------------------------------------------
  always_comb begin
    red = '0;
    if (is_red && (fold || compute)) begin
      for (int p = 0; p < P; p++) begin
        if (mask[p]) begin
          if (first) red[p] = cvt[p];
          else       red[p] = fp_alu(insn.op0, a_q[p], cvt[p]);
        end
      end
    end
  end

  always_comb begin
    logic [31:0] x, r;
    logic [P-1:0][31:0] rd;  // the port, for bit copies (copied once, as for cvt)
    x  = '0;
    r  = '0;
    rd = '0;
    result = '0;
    if (compute && insn.opcode == OP_TENSOR_COPY) rd = rd_rsp_i.data[P*32-1:0];
    if (compute) begin
      for (int p = 0; p < P; p++) begin
        if (mask[p]) begin
          x = cvt[p];
          if (is_mem) begin
            r = insn.imm0;
          end else if (is_tt) begin
            r = fp_alu(insn.op0, a_q[p], x);
          end else if (is_red) begin
            r = red[p];
          end else if (is_ts) begin
            r = (insn.op0 == ALU_BYPASS) ? x :
                insn.rev0 ? fp_alu(insn.op0, o0[p], x) : fp_alu(insn.op0, x, o0[p]);
            r = (insn.op1 == ALU_BYPASS) ? r :
                insn.rev1 ? fp_alu(insn.op1, o1[p], r) : fp_alu(insn.op1, r, o1[p]);
          end else begin
            r = x;  // tensor_copy
          end
          // tensor_copy between equal dtypes is a bit copy; everything else rounds once.
          if (insn.opcode == OP_TENSOR_COPY && insn.dst.dtype == data_dt) begin
            result[p] = ap_elem_of_word(rd[p], data_boff, data_dt);
          end else if (bits) begin
            result[p] = elem_bits(r, insn.dst.dtype);
          end else begin
            result[p] = fp_from_f32(r, insn.dst.dtype);
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (src0) a_q <= cvt;
    if (fold) a_q <= red;
  end

  // The engine runs its five opcodes only; the data on the read port has one role per cycle
  // (src0 to hold, an element to fold, an element to compute), so a_q is loaded once per cycle.
  `ASSERT_WIDE(a_opcode, !(insn_valid_i && insn_ready_o) || insn_i.opcode == OP_TENSOR_TENSOR ||
                         insn_i.opcode == OP_TENSOR_SCALAR || insn_i.opcode == OP_TENSOR_COPY ||
                         insn_i.opcode == OP_MEMSET || insn_i.opcode == OP_TENSOR_REDUCE,
               $sformatf("opcode %0d taken by the vector engine", insn_i.opcode))
  `ASSERT(a_one_role, 2'(src0) + 2'(fold) + 2'(compute) <= 2'd1,
          $sformatf("the data on the port is src0 %0d, a fold %0d and an element %0d at once", src0, fold, compute))

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // Every opcode x destination dtype the engine takes; operands in the PSUM; per-partition
  // scalars; reductions over 1-4 axes.
  // (Bins are written out one per label: Verilator's coverage file merges the instances of a
  // generate loop into one point.)
  logic cov_take;
  assign cov_take = insn_valid_i && insn_ready_o;
  always_ff @(posedge clk_i) begin
    if (rst_ni && cov_take) begin
      `COVER_DTYPES(c_tensor_tensor, insn_i.opcode == OP_TENSOR_TENSOR, insn_i.dst.dtype)
      `COVER_DTYPES(c_tensor_scalar, insn_i.opcode == OP_TENSOR_SCALAR, insn_i.dst.dtype)
      `COVER_DTYPES(c_tensor_copy, insn_i.opcode == OP_TENSOR_COPY, insn_i.dst.dtype)
      c_vector_int_dst:   cover (insn_i.dst.dtype >= DT_INT8);   // any opcode, an integer result
      c_vector_int_src:   cover (insn_i.opcode != OP_MEMSET && insn_i.src0.dtype >= DT_INT8);
      c_vector_bitvec:    cover (insn_i.opcode != OP_MEMSET && insn_i.opcode != OP_TENSOR_COPY &&
                                 alu_is_bitvec(insn_i.op0));
      `COVER_DTYPES(c_memset, insn_i.opcode == OP_MEMSET, insn_i.dst.dtype)
      `COVER_DTYPES(c_tensor_reduce, insn_i.opcode == OP_TENSOR_REDUCE, insn_i.dst.dtype)
      c_reduce_axes1: cover (insn_i.opcode == OP_TENSOR_REDUCE && insn_i.red_axes == 3'd1);
      c_reduce_axes2: cover (insn_i.opcode == OP_TENSOR_REDUCE && insn_i.red_axes == 3'd2);
      c_reduce_axes3: cover (insn_i.opcode == OP_TENSOR_REDUCE && insn_i.red_axes == 3'd3);
      c_reduce_axes4: cover (insn_i.opcode == OP_TENSOR_REDUCE && insn_i.red_axes == 3'd4);
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_ni && cov_take) begin
      c_src_psum: cover (insn_i.opcode != OP_MEMSET && insn_i.src0.mem == BUF_PSUM);
      c_dst_psum: cover (insn_i.dst.mem == BUF_PSUM);
      c_s0_vec:   cover (insn_i.opcode == OP_TENSOR_SCALAR && insn_i.s0_vec && insn_i.op0 != ALU_BYPASS);
      c_s1_vec:   cover (insn_i.opcode == OP_TENSOR_SCALAR && insn_i.s1_vec && insn_i.op1 != ALU_BYPASS);
      c_ts_one_op: cover (insn_i.opcode == OP_TENSOR_SCALAR && insn_i.op1 == ALU_BYPASS);
    end
  end
`endif
endmodule
