// Routes a lane engine's read port and write port (ncore_eng_front: the vector and the scalar
// engine) to an engine read and write port of the SBUF or of the PSUM, access by access, as the
// operand of each says (rd_psum_i, wr_psum_i). Address, lane mask, byte enables and write data go
// to both memories; only the chosen one sees the request, and its grant is the engine's. Read
// data stays on an engine port until its next granted read, so it comes back from the memory the
// last granted read went to (registered here); a PSUM address is the low bits of the engine's.
//
//                 rd_req & !rd_psum -----> SBUF read port    data --\
//   engine --+--  rd_req &  rd_psum -----> PSUM read port    data ---+--(last granted)--> engine
//            +--  wr_req & !wr_psum -----> SBUF write port
//            +--  wr_req &  wr_psum -----> PSUM write port
`include "ncore_assert.svh"

module ncore_eng_route #(
  parameter int unsigned P      = 1,
  parameter int unsigned AddrW  = 1,   // engine (SBUF) byte address
  parameter int unsigned PAddrW = 1    // PSUM byte address
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  // the engine's ports
  input  logic                 rd_req_i,
  input  logic                 rd_psum_i,
  input  logic [AddrW-1:0]     rd_addr_i,
  output logic                 rd_gnt_o,
  output logic [P-1:0][31:0]   rd_data_o,
  input  logic                 wr_req_i,
  input  logic                 wr_psum_i,
  input  logic [AddrW-1:0]     wr_addr_i,
  output logic                 wr_gnt_o,
  // the SBUF's engine ports (address, mask and data straight from the engine)
  output logic                 sb_rd_req_o,
  input  logic                 sb_rd_gnt_i,
  input  logic [P-1:0][31:0]   sb_rd_data_i,
  output logic                 sb_wr_req_o,
  input  logic                 sb_wr_gnt_i,
  // the PSUM's engine ports
  output logic                 ps_rd_req_o,
  output logic [PAddrW-1:0]    ps_rd_addr_o,
  input  logic                 ps_rd_gnt_i,
  input  logic [P-1:0][31:0]   ps_rd_data_i,
  output logic                 ps_wr_req_o,
  output logic [PAddrW-1:0]    ps_wr_addr_o,
  input  logic                 ps_wr_gnt_i
);
  logic rd_sel_q;  // the last granted read went to the PSUM

  assign sb_rd_req_o  = rd_req_i && !rd_psum_i;
  assign ps_rd_req_o  = rd_req_i && rd_psum_i;
  assign ps_rd_addr_o = PAddrW'(rd_addr_i);
  assign sb_wr_req_o  = wr_req_i && !wr_psum_i;
  assign ps_wr_req_o  = wr_req_i && wr_psum_i;
  assign ps_wr_addr_o = PAddrW'(wr_addr_i);
  assign rd_gnt_o     = rd_psum_i ? ps_rd_gnt_i : sb_rd_gnt_i;
  assign wr_gnt_o     = wr_psum_i ? ps_wr_gnt_i : sb_wr_gnt_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)                  rd_sel_q <= 1'b0;
    else if (rd_req_i && rd_gnt_o) rd_sel_q <= rd_psum_i;
  end
  assign rd_data_o = rd_sel_q ? ps_rd_data_i : sb_rd_data_i;

  logic unused_addr;
  assign unused_addr = ^{rd_addr_i, wr_addr_i};

  // The memories grant only what is requested.
  `ASSERT(a_gnt_req, (!sb_rd_gnt_i || sb_rd_req_o) && (!ps_rd_gnt_i || ps_rd_req_o) &&
                     (!sb_wr_gnt_i || sb_wr_req_o) && (!ps_wr_gnt_i || ps_wr_req_o),
          $sformatf("grant without a request (SBUF rd %0d wr %0d, PSUM rd %0d wr %0d)", sb_rd_gnt_i, sb_wr_gnt_i,
                    ps_rd_gnt_i, ps_wr_gnt_i))
endmodule
