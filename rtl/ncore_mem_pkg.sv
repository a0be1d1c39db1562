// The lane engines' memory ports (the vector and the scalar engine: ncore_eng_front, ncore_dve,
// ncore_act, routed by ncore_eng_route) as request/response structs, after OpenTitan's TL-UL
// port types (tl_h2d_t, tl_d2h_t): one struct from the engine, one back, for each of its read
// and write ports.
//
//   engine --rd_req (eng_rd_req_t: req, psum, addr, mask)--------------> SBUF or PSUM
//          <--rd_rsp (eng_rd_rsp_t: gnt, data)-------------------------
//          --wr_req (eng_wr_req_t: req, psum, addr, mask, ben, data)-->
//          <--wr_rsp (eng_wr_rsp_t: gnt)-------------------------------
//
// The protocol is the memories' engine ports' (ncore_sbuf, ncore_psum): a request is granted or
// refused in its cycle (gnt) and a refused one is presented again, unchanged; read data comes the
// cycle after the grant and stays until the port's next granted read.
//
// As in OpenTitan (top_pkg's TL_AW, TL_DW), the widths are fixed here, by the largest preset:
// MemLanes lanes (NumPartitions) and MemAddrW address bits ($clog2(SbufBytes)); a preset with
// fewer partitions or a smaller SBUF uses the low lanes and the low address bits, the others are
// zero (ncore_eng_front checks that its preset fits). A model of one small preset may narrow them
// with +define+NCORE_MEM_LANES=N +define+NCORE_MEM_ADDR_W=A (the build does for tiny: its lane
// benches and core then move 16 lanes, not 128). Lane p of mask and data is partition p
// (data is one vector, lane p at [32*p +: 32], so that a waveform shows it as one signal); a
// lane's data is the 32-bit word holding its element (reads), or the element in the low bits
// (writes, with the byte enables ben relative to it).
`ifndef NCORE_MEM_LANES
`define NCORE_MEM_LANES 128  // NumPartitions of trn2 and trn1
`endif
`ifndef NCORE_MEM_ADDR_W
`define NCORE_MEM_ADDR_W 18  // $clog2(SbufBytes) of trn2 and trn1
`endif

package ncore_mem_pkg;

  localparam int unsigned MemLanes = `NCORE_MEM_LANES;
  localparam int unsigned MemAddrW = `NCORE_MEM_ADDR_W;

  // A read: every lane of mask reads the word at byte address addr of its partition, in the SBUF
  // or (psum) in the PSUM.
  typedef struct packed {
    logic                req;
    logic                psum;
    logic [MemAddrW-1:0] addr;
    logic [MemLanes-1:0] mask;
  } eng_rd_req_t;

  typedef struct packed {
    logic                      gnt;   // the request is granted in this cycle
    logic [MemLanes*32-1:0]    data;  // the last granted read's words (lane p at [32*p +: 32]), from the
                                      // cycle after its grant
  } eng_rd_rsp_t;

  // A write: every lane of mask writes its element at byte address addr, the bytes of ben.
  typedef struct packed {
    logic                req;
    logic                psum;
    logic [MemAddrW-1:0] addr;
    logic [MemLanes-1:0] mask;
    logic [3:0]          ben;
    logic [MemLanes*32-1:0] data;  // lane p at [32*p +: 32]
  } eng_wr_req_t;

  typedef struct packed {
    logic gnt;  // the request is granted (written) in this cycle
  } eng_wr_rsp_t;

endpackage
