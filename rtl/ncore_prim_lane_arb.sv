// Fixed-priority arbiter of lane-masked requests over banks: the engine-port arbitration of the
// memories (ncore_psum's reads and writes; ncore_sbuf's through ncore_sbuf_arb).
//
// A request asks for one bank in the lanes (partitions) of its mask. Requests are served in port
// order, port 0 first: a request is granted when none of its lanes is taken on its bank, and its
// grant then takes them. busy_i says which (bank, lane) pairs are taken before any port is served
// (the PSUM's tensor-engine writes, the SBUF's DMA ports with priority on a bank); busy_o adds
// those the grants take, for a later stage. A request with an empty mask takes nothing and is
// granted. A refused request marks its bank in conflict_o.
//
//   busy_i --> [port 0] --> [port 1] --> ... --> [port N-1] --> busy_o
//               gnt[0]       gnt[1]                gnt[N-1]
`include "ncore_assert.svh"

module ncore_prim_lane_arb #(
  parameter int unsigned  N     = 1,
  parameter int unsigned  Banks = 1,
  parameter int unsigned  P     = 1,
  localparam int unsigned BankW = (Banks > 1) ? $clog2(Banks) : 1
) (
  input  logic                    clk_i,   // the assertions' (the arbiter is combinational)
  input  logic                    rst_ni,
  input  logic [N-1:0]            req_i,
  input  logic [N-1:0][BankW-1:0] bank_i,
  input  logic [N-1:0][P-1:0]     mask_i,
  input  logic [Banks-1:0][P-1:0] busy_i,
  output logic [N-1:0]            gnt_o,
  output logic [Banks-1:0][P-1:0] busy_o,
  output logic [Banks-1:0]        conflict_o
);
  always_comb begin
    busy_o     = busy_i;
    gnt_o      = '0;
    conflict_o = '0;
    for (int r = 0; r < N; r++) begin
      if (req_i[r]) begin
        if ((busy_o[bank_i[r]] & mask_i[r]) == '0) begin
          gnt_o[r]          = 1'b1;
          busy_o[bank_i[r]] = busy_o[bank_i[r]] | mask_i[r];
        end else begin
          conflict_o[bank_i[r]] = 1'b1;
        end
      end
    end
  end

  // No grant takes a (bank, lane) that busy_i or an earlier grant holds, whatever the order the
  // ports were served in (recomputed from the grants alone): the PSUM's engine ports never meet
  // the tensor engine's writes, nor the SBUF's engine ports a DMA port with priority. Grants only
  // for requests.
`ifdef NCORE_ASSERT
  logic chk_overlap;
  always_comb begin
    logic [Banks-1:0][P-1:0] occ;
    occ         = busy_i;
    chk_overlap = 1'b0;
    for (int r = 0; r < N; r++) begin
      if (gnt_o[r]) begin
        if ((occ[bank_i[r]] & mask_i[r]) != '0) chk_overlap = 1'b1;
        occ[bank_i[r]] = occ[bank_i[r]] | mask_i[r];
      end
    end
  end
`endif
  `ASSERT_NEVER(a_one_access, chk_overlap,
                $sformatf("a grant on a bank and lane held before it or by another grant (grants %0h)", gnt_o))
  `ASSERT(a_gnt_req, (gnt_o & ~req_i) == '0, "grant without a request")
`ifndef NCORE_ASSERT
  logic unused_clk;  // the assertions' clock and reset
  assign unused_clk = clk_i ^ rst_ni;
`endif
endmodule
