// Tensor-engine PE array: Cfg.NumPartitions x Cfg.NumPartitions weight-stationary systolic array.
//
// Row k takes the contraction index k (SBUF partition start + k of both operands); column j
// the stationary free index j, which becomes PSUM partition dst.start + j. Every PE holds two
// stationary weights (set 0 and set 1) and, per cycle, one moving element (flowing right) and
// one partial sum (flowing down):
//
//             moving column n (row k enters k cycles late)
//               |  x[0][n]  ->  PE(0,0) -> PE(0,1) -> ... -> PE(0,P-1)
//               |                  | ps        | ps                | ps
//               |  x[1][n]  -> (1) PE(1,0) -> PE(1,1) -> ... -> PE(1,P-1)
//               |                  |           |                   |
//               v  ...             v           v                   v
//                           out column 0   out column 1 (1 cycle later) ...
//
//   PE(k, j):  ps(k, j) = RNE(ps(k-1, j) + w[set][k][j] * x[k][n])   (ps(-1, j) = +0)
//
// A moving element carries the weight set it multiplies, so a PE changes sets exactly when the
// first element of the next multiply passes it, while the loader fills the other set. The
// loader's column (one stationary column per cycle) travels the same way as a moving column:
// each row's weight payload enters with the row's skew and flows right, and the PE whose column
// it names keeps it; the last column's payload marks the columns to its right as unused ("off")
// in that set, so they do no work. Weights and moving values are unpacked once (ncore_fp_pkg
// pe_op_t: class, sign, exponent, normalised significand) so a PE only multiplies and adds
// (pe_fma). A slot without a moving element, a row beyond the multiply's K and a column beyond
// the stationary's M pass the partial sum down unchanged and do no arithmetic.
//
// Timing. A column presented (mv_valid_i) in cycle c reaches PE(k, j) at the clock edge that
// ends cycle c + 1 + k + j; column j's result leaves the bottom row at the edge ending cycle
// c + P + j and is on out_*_o[j] in the cycle after, with the tag presented alongside it. The
// same holds for a stationary column: its weights are in PE(k, j) after the edge ending
// c + 1 + k + j. So a column presented after the last column of a load uses the new weights,
// and a load may start presenting as soon as the last multiply using its set has presented its
// last column.
//
// Simulation speed (DESIGN.md section 5). The PEs are not modules: state lives in unpacked
// arrays indexed [row][column] and updated by loops, in place, rows and columns descending, so
// that each register reads its neighbours' old values before they change (blocking assignments
// in always_ff; see the waiver in lint.vlt). The columns are split into Groups independent
// groups, each one always_ff with its own state, so that Verilator can evaluate them on
// different threads (--threads). A group does not take its left-edge input from the group to
// its left: the moving and stationary columns are kept in a skew buffer indexed by time (a
// circular buffer, one per group), and row k of a group starting at column J0 reads the entry
// presented 1 + k + J0 cycles ago, the same value at the same cycle as a shift from the left
// neighbour. The array does nothing per PE while no column is in flight (busy_o low).
`include "ncore_assert.svh"

module ncore_pe_array
  import ncore_cfg_pkg::*;
  import ncore_fp_pkg::*;
#(
  parameter int unsigned  Preset = 0,  // the preset by number, for a bench that Verilates this alone (-GPreset)
  parameter cfg_t         Cfg    = preset(Preset),
  parameter int unsigned  Groups = 2,    // independent column groups (Verilator threads)
  parameter int unsigned  TagW   = 8,    // bits of the tag returned with each result
  localparam int unsigned P      = Cfg.NumPartitions,
  localparam int unsigned ColW   = $clog2(P)
) (
`include "ncore_pe_array_ports.svh"
);
  localparam int unsigned GW  = P / Groups;           // columns per group
  localparam int unsigned D   = 2 * P;                // skew buffer and tag history depth
  localparam int unsigned DW  = $clog2(D);

  // Words of the per-PE registers (64-bit so that Verilator keeps each in one machine word).
  //   moving element  x:  [63] valid  [62] set  [35:0] operand
  //   weight payload  wp: [63] valid  [62] set  [61] last  [60:53] column  [35:0] operand
  //   weight          w:  [36] off  [35:0] operand
  localparam int unsigned XV = 63, XS = 62, WL = 61, WC = 53;

  // ---------------------------------------------------------------------------------------
  // Time, activity, tag history (ncore_pe_timing, shared with the simulation-only fast array)
  // ---------------------------------------------------------------------------------------
  logic [DW-1:0]      t_q;                  // cycle count modulo D: the skew buffer slot of this cycle
  logic               run;

  ncore_pe_timing #(.P(P), .TagW(TagW)) u_timing (
    .clk_i, .rst_ni, .mv_valid_i, .mv_tag_i, .ld_valid_i, .slot_o(t_q), .busy_o(run), .out_valid_o, .out_tag_o);

  assign busy_o = run;

  // ---------------------------------------------------------------------------------------
  // Edge: unpack the presented columns once
  // ---------------------------------------------------------------------------------------
  logic [P-1:0][35:0] mv_op, ld_op;
  always_comb begin
    for (int k = 0; k < P; k++) begin
      mv_op[k] = '0;
      ld_op[k] = '0;
      if (mv_valid_i && mv_rows_i[k]) mv_op[k] = pe_unpack(mv_data_i[k]);
      if (ld_valid_i) ld_op[k] = pe_unpack(ld_data_i[k]);
    end
  end

  // ---------------------------------------------------------------------------------------
  // Column groups
  // ---------------------------------------------------------------------------------------
  for (genvar g = 0; g < Groups; g++) begin : g_grp
    localparam int unsigned J0 = g * GW;

    // Skew buffer (this group's copy): what was presented in each of the last D cycles.
    /*verilator coverage_off*/  // the array's registers: no toggle coverage (make coverage)
    logic [63:0]        mvb_q [D][P];        // moving operands
    logic [P-1:0]       mvr_q [D];           // rows that take part (all clear: no column)
    logic               mvs_q [D];           // weight set
    logic [63:0]        ldb_q [D][P];        // weight payloads (header bits included)
    logic               ldv_q [D];
    // PE state: PE(k, J0 + j) is [k][j]. (Power-of-two sizes: Verilator then indexes without
    // bounds checks.)
    logic [63:0]        x_q  [P][GW];        // moving element
    logic [63:0]        wp_q [P][GW];        // weight payload
    logic [63:0]        w_q  [P][GW][2];     // weights, both sets
    logic [31:0]        ps_q [P][GW];        // partial sum
    /*verilator coverage_on*/

    // PE(k, J0 + j) at a clock edge, given what its left neighbour (xl, wl) and its upper
    // neighbour (pin) held before the edge.
    function automatic void pe(logic [ColW-1:0] k, int j, logic [63:0] xl, logic [63:0] wl, logic [31:0] pin);
      logic [36:0] wsel;
      if (xl[XV]) begin
        wsel = w_q[k][j][xl[XS]][36:0];
        ps_q[k][j] = wsel[36] ? pin : pe_fma(pe_op_t'(wsel[35:0]), pe_op_t'(xl[35:0]), pin);
      end else begin
        ps_q[k][j] = pin;
      end
      x_q[k][j] = xl;
      if (wl[XV]) begin
        if (32'(wl[WC +: 8]) == J0 + j) w_q[k][j][wl[XS]] = {28'd0, wl[35:0]};
        else if (wl[WL] && 32'(wl[WC +: 8]) < J0 + j) w_q[k][j][wl[XS]] = 64'd1 << 36;
      end
      wp_q[k][j] = wl;
    endfunction

    // One clock of the group's PEs, in place: rows and columns descending, so that each PE reads
    // the old values of its left and upper neighbours. Column 0 takes the skew buffer's entry.
    // (Functions, so that Verilator makes the loop variables C++ locals.)
    function automatic void step();
      for (int k = P - 1; k >= 0; k--) begin
        logic [DW-1:0] s;
        logic [63:0]   xin, win;
        s   = t_q - DW'(1 + k + J0);
        xin = mvr_q[s][k] ? {1'b1, mvs_q[s], mvb_q[s][k][61:0]} : 64'd0;
        win = ldv_q[s] ? ldb_q[s][k] : 64'd0;
        for (int j = GW - 1; j >= 1; j--) pe(ColW'(k), j, x_q[k][j - 1], wp_q[k][j - 1], (k == 0) ? 32'd0 : ps_q[k - 1][j]);
        pe(ColW'(k), 0, xin, win, (k == 0) ? 32'd0 : ps_q[k - 1][0]);
      end
    endfunction

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        for (int s = 0; s < D; s++) begin
          mvr_q[s] = '0;
          ldv_q[s] = 1'b0;
        end
        for (int k = 0; k < P; k++) begin
          for (int j = 0; j < GW; j++) begin
            x_q[k][j]  = '0;
            wp_q[k][j] = '0;
          end
        end
      end else begin
        if (run) step();
        // This cycle's presentation goes into slot t_q (never a slot read above).
        mvr_q[t_q] = mv_valid_i ? mv_rows_i : '0;
        mvs_q[t_q] = mv_set_i;
        ldv_q[t_q] = ld_valid_i;
        if (mv_valid_i) begin
          for (int k = 0; k < P; k++) mvb_q[t_q][k] = {28'd0, mv_op[k]};
        end
        if (ld_valid_i) begin
          for (int k = 0; k < P; k++)
            ldb_q[t_q][k] = {1'b1, ld_set_i, ld_last_i, 8'(ld_col_i), 17'd0, ld_op[k]};
        end
      end
    end

    for (genvar j = 0; j < GW; j++) begin : g_out
      assign out_data_o[J0 + j] = ps_q[P - 1][j];
    end
  end

  // A load presents its columns on the weight set the multiplies do not use: a moving column and
  // a stationary column presented in one cycle name different sets (a load starts presenting only
  // after the last multiply on its set has presented its last column, and a multiply on the
  // loaded set only after the load's last column).
  `ASSERT_IF(a_load_shadow, mv_set_i != ld_set_i, mv_valid_i && ld_valid_i,
             $sformatf("a moving and a stationary column presented on weight set %0d in one cycle", ld_set_i))

endmodule
