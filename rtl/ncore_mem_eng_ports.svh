// The engine ports of the memories (ncore_sbuf, ncore_psum), included in each one's port list:
// NumEngRd read and NumEngWr write ports, each one element per lane at one byte address (AddrW
// bits), a lane mask of P lanes (the module's parameters and localparams). Loose signals, not
// ncore_mem_pkg's structs: the lane engines' reads and writes cross them, and a lane engine's
// write data is combinational from its read data; as unpacked arrays of structs (one variable
// each in a Verilated model) they would put each read response's grant beside its data and each
// write request's data beside its request, a loop of variables (write data -> write grant -> next
// read -> read grant -> read data -> write data) that Verilator 5.006 reports (UNOPTFLAT) and then
// iterates every cycle.
  // engine read ports
  input  logic [NumEngRd-1:0]              er_req_i,
  input  logic [NumEngRd-1:0][AddrW-1:0]   er_addr_i,
  input  logic [NumEngRd-1:0][P-1:0]       er_mask_i,
  output logic [NumEngRd-1:0]              er_gnt_o,
  output logic [NumEngRd-1:0][P-1:0][31:0] er_rdata_o,
  // engine write ports
  input  logic [NumEngWr-1:0]              ew_req_i,
  input  logic [NumEngWr-1:0][AddrW-1:0]   ew_addr_i,
  input  logic [NumEngWr-1:0][P-1:0]       ew_mask_i,
  input  logic [NumEngWr-1:0][3:0]         ew_ben_i,
  input  logic [NumEngWr-1:0][P-1:0][31:0] ew_wdata_i,
  output logic [NumEngWr-1:0]              ew_gnt_o,
