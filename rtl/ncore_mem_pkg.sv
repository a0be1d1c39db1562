// The memories' ports as request/response structs, after OpenTitan's TL-UL port types (tl_h2d_t,
// tl_d2h_t): one struct from the requester, one back, for each read and each write port.
//
// Engine ports: the lane engines' (the vector and the scalar engine: ncore_eng_front, ncore_dve,
// ncore_act, routed by ncore_eng_route) and the tensor engine's SBUF reads (ncore_pe). (The
// SBUF's and the PSUM's engine ports that take them are loose signals, rtl/ncore_mem_eng_ports.svh
// says why; their owner, ncore_top or a bench, connects the two.)
//
//   engine --rd_req (eng_rd_req_t: req, psum, addr, mask)--------------> SBUF or PSUM
//          <--rd_rsp (eng_rd_rsp_t: gnt, data)-------------------------
//          --wr_req (eng_wr_req_t: req, psum, addr, mask, ben, data)-->
//          <--wr_rsp (eng_wr_rsp_t: gnt)-------------------------------
//
// Line ports: a DMA engine's SBUF ports (ncore_dma_engine, ncore_dma) and the SBUF's DMA ports
// (ncore_sbuf; ncore_prim_banked_mem's line ports), one line of one partition:
//
//   DMA engine --(line_rd_req_t: req, addr)----------> SBUF       addr: line_addr_t (part, line)
//              <-(line_rd_rsp_t: gnt, data)------------
//              --(line_wr_req_t: req, addr, wr)------->            wr: line_bytes_t (ben, data)
//              <-(line_wr_rsp_t: gnt)------------------
//
// The lane write port: the tensor engine's PSUM writes (ncore_pe, ncore_psum;
// ncore_prim_banked_mem's lane write port), lane_wr_req_t (valid, acc, addr, data): one fp32 word
// per lane, each at its own word address, overwriting or (acc) accumulating; the PSUM takes every
// one in its cycle.
//
// HBM ports: a DMA engine's (ncore_dma_engine, ncore_dma; ncore_top's are loose signals, bound
// by the SystemC top level): hbm_req_t (valid, we, line, wr) out, hbm_rsp_t (credit, rvalid,
// rdata, ack) in. A request needs a credit; read data comes back in request order, a
// write's acknowledgement when it is done.
//
// The protocol of the engine and line ports is the memories' (ncore_sbuf, ncore_psum): a request
// is granted or refused in its cycle (gnt) and a refused one is presented again, unchanged; read
// data comes the cycle after the grant and stays until the port's next granted read.
//
// As in OpenTitan (top_pkg's TL_AW, TL_DW), the widths are fixed here, by the largest preset:
// MemLanes lanes (NumPartitions) and MemAddrW address bits ($clog2(SbufBytes)); a preset with
// fewer partitions or a smaller SBUF uses the low lanes and the low address bits, the others are
// zero (the modules check that their preset fits). A model of one small preset may narrow them
// with +define+NCORE_MEM_LANES=N +define+NCORE_MEM_ADDR_W=A (the build does for tiny: its benches
// and core then move 16 lanes, not 128). Lane p of mask and data is partition p (data is one
// vector, lane p at [32*p +: 32], so that a waveform shows it as one signal); a lane's data is
// the 32-bit word holding its element (reads), or the element in the low bits (writes, with the
// byte enables ben relative to it). A line is MemLineBytes (every preset's SbufLineBytes), its
// byte b at [8*b +: 8]; an HBM line address has HbmLineW bits (every preset's HbmAddrBits, 40); a
// PSUM word address PsumWordW bits (the largest preset's), lane p's at [PsumWordW*p +: PsumWordW].
`ifndef NCORE_MEM_LANES
`define NCORE_MEM_LANES 128  // NumPartitions of trn2 and trn1
`endif
`ifndef NCORE_MEM_ADDR_W
`define NCORE_MEM_ADDR_W 18  // $clog2(SbufBytes) of trn2 and trn1
`endif

package ncore_mem_pkg;

  localparam int unsigned MemLanes = `NCORE_MEM_LANES;
  localparam int unsigned MemAddrW = `NCORE_MEM_ADDR_W;
  localparam int unsigned MemLineBytes = 16;                              // SbufLineBytes
  localparam int unsigned MemPartW = (MemLanes > 1) ? $clog2(MemLanes) : 1;  // a partition
  localparam int unsigned MemLineW = MemAddrW - $clog2(MemLineBytes);      // an SBUF line address
  localparam int unsigned HbmLineW = 40 - $clog2(MemLineBytes);            // an HBM line address
  localparam int unsigned PsumWordW = 12;                                  // $clog2(PsumBytes / 4)

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

  // The tensor engine's PSUM writes: lane p writes (valid) or adds (acc) its word at its address.
  typedef struct packed {
    logic [MemLanes-1:0]           valid;
    logic [MemLanes-1:0]           acc;
    logic [MemLanes*PsumWordW-1:0] addr;
    logic [MemLanes*32-1:0]        data;
  } lane_wr_req_t;

  // A line of the SBUF (line `line` of partition `part`), and the bytes a line write writes (byte
  // b of data at [8*b +: 8] where ben[b] is set: an SBUF line's, or an HBM line's).
  typedef struct packed {
    logic [MemPartW-1:0] part;
    logic [MemLineW-1:0] line;
  } line_addr_t;

  typedef struct packed {
    logic [MemLineBytes-1:0]   ben;
    logic [MemLineBytes*8-1:0] data;
  } line_bytes_t;

  typedef struct packed {
    logic       req;
    line_addr_t addr;
  } line_rd_req_t;

  typedef struct packed {
    logic                      gnt;   // the request is granted in this cycle
    logic [MemLineBytes*8-1:0] data;  // the last granted read's line, from the cycle after its grant
  } line_rd_rsp_t;

  typedef struct packed {
    logic        req;
    line_addr_t  addr;
    line_bytes_t wr;
  } line_wr_req_t;

  typedef struct packed {
    logic gnt;  // the request is granted (written) in this cycle
  } line_wr_rsp_t;

  // An HBM request (sent with a credit): a read of line `line`, or (we) a write of it.
  typedef struct packed {
    logic                valid;
    logic                we;
    logic [HbmLineW-1:0] line;
    line_bytes_t         wr;
  } hbm_req_t;

  typedef struct packed {
    logic                      credit;  // one more request may be sent
    logic                      rvalid;  // rdata is the oldest outstanding read's line
    logic [MemLineBytes*8-1:0] rdata;
    logic                      ack;     // the oldest outstanding write is done
  } hbm_rsp_t;

endpackage
