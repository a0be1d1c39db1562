// The ports a lane engine (ncore_dve, ncore_act) and its memory-access front end
// (ncore_eng_front) have in common, included in each one's port list: the clock, the reset and
// the engine's clock enable, the instruction port (from the engine's sequencer), and the engine's
// read and write ports (ncore_mem_pkg's structs), each access to the SBUF or (psum) the PSUM. The
// types are package-qualified, so that the file reads the same wherever it is included.
  input  logic                       clk_i,
  input  logic                       rst_ni,
  input  logic                       ce_i,
  input  logic                       insn_valid_i,
  input  ncore_isa_pkg::insn_t       insn_i,
  output logic                       insn_ready_o,
  output logic                       rd_start_o,   // pulse: the instruction reads its first input
  output logic                       done_o,       // pulse: the instruction has written everything
  output logic                       busy_o,
  output ncore_mem_pkg::eng_rd_req_t rd_req_o,
  input  ncore_mem_pkg::eng_rd_rsp_t rd_rsp_i,
  output ncore_mem_pkg::eng_wr_req_t wr_req_o,
  input  ncore_mem_pkg::eng_wr_rsp_t wr_rsp_i
