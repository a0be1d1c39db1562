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
module ncore_prim_lane_arb #(
  parameter int unsigned  N     = 1,
  parameter int unsigned  Banks = 1,
  parameter int unsigned  P     = 1,
  localparam int unsigned BankW = (Banks > 1) ? $clog2(Banks) : 1
) (
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
endmodule
