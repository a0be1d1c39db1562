// Access-pattern address generator.
//
// Walks the free dimensions of one operand (ncore_isa_pkg::ap_t: up to four [size, stride]
// pairs, dims[0] innermost, strides in elements) and presents the byte address of the
// current element. `init_i` loads a new pattern starting at byte address `base_i`;
// `step_i` advances by `step_n_i` elements along dims[0], where step_n_i may exceed 1 only
// while it stays within the current dims[0] sweep (rem0_o says how many elements are left in
// it). The DMA engines use that to move a whole contiguous run per cycle.
//
// No multiplier: each outer dimension keeps the address where its current sweep began, so a
// wrap is an add of stride << log2(element bytes).
//
//   dims[1] sweep base ----> [e e e e ... size0]   step: addr += n * stride0 * esz
//   + stride1*esz ---------> [e e e e ... size0]   wrap: base1 += stride1 * esz; addr = base1
`include "ncore_assert.svh"

module ncore_ap_iter #(
  parameter int unsigned AddrW = 32  // every instance sets it: HBM or SBUF/PSUM address bits
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             init_i,
  input  logic [AddrW-1:0] base_i,
  input  logic [1:0]       esz_log2_i,   // log2(element bytes)
  input  logic [3:0][31:0] size_i,
  input  logic [3:0][31:0] stride_i,     // signed element strides
  input  logic             step_i,
  input  logic [4:0]       step_n_i,
  output logic [AddrW-1:0] addr_o,
  output logic [31:0]      rem0_o,       // elements left in the current dims[0] sweep, current included
  output logic             last_o        // the current element is the last of the pattern
);
  logic [3:0][31:0]      pos_q;
  logic [3:0][31:0]      size_q;
  logic [3:0][AddrW-1:0] step_q;         // stride * element bytes, sign-extended
  logic [3:1][AddrW-1:0] base_q;         // address where the current sweep of dims[d-1] began
  logic [AddrW-1:0]      addr_q;

  function automatic logic [AddrW-1:0] scaled(logic [31:0] stride, logic [1:0] sh);
    logic signed [AddrW-1:0] s;
    s = AddrW'($signed(stride));
    scaled = s <<< sh;
  endfunction

  assign addr_o = addr_q;
  assign rem0_o = size_q[0] - pos_q[0];
  assign last_o = (pos_q[0] == size_q[0] - 1) && (pos_q[1] == size_q[1] - 1) &&
                  (pos_q[2] == size_q[2] - 1) && (pos_q[3] == size_q[3] - 1);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pos_q  <= '0;
      size_q <= '0;
      step_q <= '0;
      base_q <= '0;
      addr_q <= '0;
    end else if (init_i) begin
      pos_q  <= '0;
      size_q <= size_i;
      for (int d = 0; d < 4; d++) step_q[d] <= scaled(stride_i[d], esz_log2_i);
      for (int d = 1; d < 4; d++) base_q[d] <= base_i;
      addr_q <= base_i;
    end else if (step_i) begin
      if (pos_q[0] + 32'(step_n_i) < size_q[0]) begin
        pos_q[0] <= pos_q[0] + 32'(step_n_i);
        addr_q   <= (step_n_i == 5'd1) ? addr_q + step_q[0]
                                       : addr_q + (step_q[0] * AddrW'(step_n_i));
      end else begin
        pos_q[0] <= '0;
        if (pos_q[1] + 1 < size_q[1]) begin
          pos_q[1]  <= pos_q[1] + 1;
          base_q[1] <= base_q[1] + step_q[1];
          addr_q    <= base_q[1] + step_q[1];
        end else begin
          pos_q[1] <= '0;
          if (pos_q[2] + 1 < size_q[2]) begin
            pos_q[2]  <= pos_q[2] + 1;
            base_q[2] <= base_q[2] + step_q[2];
            base_q[1] <= base_q[2] + step_q[2];
            addr_q    <= base_q[2] + step_q[2];
          end else begin
            pos_q[2] <= '0;
            // dims[3]; past the end the pattern restarts at its base, never used.
            pos_q[3]  <= (pos_q[3] + 1 < size_q[3]) ? pos_q[3] + 1 : '0;
            base_q[3] <= base_q[3] + step_q[3];
            base_q[2] <= base_q[3] + step_q[3];
            base_q[1] <= base_q[3] + step_q[3];
            addr_q    <= base_q[3] + step_q[3];
          end
        end
      end
    end
  end

  // A step of n elements stays within the current dims[0] sweep (the caller's contract).
  `ASSERT_IF(a_step_n, 32'(step_n_i) <= rem0_o, step_i && !init_i,
             $sformatf("step of %0d elements with %0d left in the sweep", step_n_i, rem0_o))

  // ---------------------------------------------------------------------------------------
  // Functional cover points (coverage builds: NCORE_COVER, Verilator --coverage-user; make
  // coverage reports each bin, rtl/coverage_waivers.txt lists the bins no run can reach)
  // ---------------------------------------------------------------------------------------
`ifdef NCORE_COVER
  // The dimensions an access pattern walks: a step within dims[0] (c_walk1), a wrap into dims[1],
  // dims[2], dims[3] (c_walk2..4); a step of several elements (the DMA's chunks).
  logic [2:0] cov_level;  // the dimension a step advances, 1..4 (0: the pattern's last step)
  assign cov_level = (pos_q[0] + 32'(step_n_i) < size_q[0]) ? 3'd1 : (pos_q[1] + 1 < size_q[1]) ? 3'd2 :
                     (pos_q[2] + 1 < size_q[2]) ? 3'd3 : (pos_q[3] + 1 < size_q[3]) ? 3'd4 : 3'd0;
  always_ff @(posedge clk_i) begin
    if (rst_ni && step_i && !init_i) begin
      c_walk1: cover (cov_level == 3'd1);
      c_walk2: cover (cov_level == 3'd2);
      c_walk3: cover (cov_level == 3'd3);
      c_walk4: cover (cov_level == 3'd4);
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_ni && step_i && !init_i) c_step_n: cover (step_n_i > 5'd1);
  end
`endif
endmodule
