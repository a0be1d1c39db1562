// Routes a lane engine's read port and write port (ncore_eng_front: the vector and the scalar
// engine; ncore_mem_pkg's request and response structs) to an engine read and write port of the
// SBUF or of the PSUM, access by access, as the operand of each says (the requests' psum).
// Address, lane mask, byte enables and write data go to both memories (the owner connects the
// preset's lanes and address bits of the requests; a PSUM address is their low bits); only the
// chosen one sees the request, and its grant is the engine's. Read data stays on an engine port
// until its next granted read, so it comes back from the memory the last granted read went to
// (registered here).
//
//                 rd_req & !psum -----> SBUF read port    data --\
//   engine --+--  rd_req &  psum -----> PSUM read port    data ---+--(last granted)--> engine
//            +--  wr_req & !psum -----> SBUF write port
//            +--  wr_req &  psum -----> PSUM write port
`include "ncore_assert.svh"

module ncore_eng_route
  import ncore_mem_pkg::*;
#(
  parameter int unsigned P = 1
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  // the engine's ports
  input  eng_rd_req_t          rd_req_i,
  output eng_rd_rsp_t          rd_rsp_o,
  input  eng_wr_req_t          wr_req_i,
  output eng_wr_rsp_t          wr_rsp_o,
  // the SBUF's engine ports: requests, grants, read data
  output logic                 sb_rd_req_o,
  output logic                 sb_wr_req_o,
  input  logic                 sb_rd_gnt_i,
  input  logic                 sb_wr_gnt_i,
  input  logic [P-1:0][31:0]   sb_rd_data_i,
  // the PSUM's
  output logic                 ps_rd_req_o,
  output logic                 ps_wr_req_o,
  input  logic                 ps_rd_gnt_i,
  input  logic                 ps_wr_gnt_i,
  input  logic [P-1:0][31:0]   ps_rd_data_i
);
  logic               rd_gnt;
  logic               rd_sel_q;  // the last granted read went to the PSUM
  logic [P-1:0][31:0] rd_data;

  assign sb_rd_req_o  = rd_req_i.req && !rd_req_i.psum;
  assign ps_rd_req_o  = rd_req_i.req && rd_req_i.psum;
  assign sb_wr_req_o  = wr_req_i.req && !wr_req_i.psum;
  assign ps_wr_req_o  = wr_req_i.req && wr_req_i.psum;
  assign rd_gnt       = rd_req_i.psum ? ps_rd_gnt_i : sb_rd_gnt_i;
  assign wr_rsp_o.gnt = wr_req_i.psum ? ps_wr_gnt_i : sb_wr_gnt_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)                    rd_sel_q <= 1'b0;
    else if (rd_req_i.req && rd_gnt) rd_sel_q <= rd_req_i.psum;
  end
  assign rd_data  = rd_sel_q ? ps_rd_data_i : sb_rd_data_i;
  assign rd_rsp_o = '{gnt: rd_gnt, data: (MemLanes * 32)'(rd_data)};

  // The owner hands the memories the requests' addresses, lanes, byte enables and data.
  logic unused_req;
  assign unused_req = ^{rd_req_i.addr, rd_req_i.mask, wr_req_i.addr, wr_req_i.mask, wr_req_i.ben, wr_req_i.data};

  // The memories grant only what is requested.
  `ASSERT(a_gnt_req, (!sb_rd_gnt_i || sb_rd_req_o) && (!ps_rd_gnt_i || ps_rd_req_o) &&
                     (!sb_wr_gnt_i || sb_wr_req_o) && (!ps_wr_gnt_i || ps_wr_req_o),
          $sformatf("grant without a request (SBUF rd %0d wr %0d, PSUM rd %0d wr %0d)", sb_rd_gnt_i, sb_wr_gnt_i,
                    ps_rd_gnt_i, ps_wr_gnt_i))
endmodule
