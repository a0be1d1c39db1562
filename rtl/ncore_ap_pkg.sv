// Operand helpers shared by the engines: what every engine that walks an access pattern
// (ncore_isa_pkg::ap_t) over the 32-bit words of a memory needs to know about its elements.
//
// An element of a 4-byte dtype is a whole word; a 2-byte element is the lower or the upper half
// of its word (byte address bit 1), a 1-byte element one of its bytes (address bits 1:0), and
// engines carry it in the low bits of a lane:
//
//   word  [31 .......... 16][15 ........... 0]
//          element at byte 2  element at byte 0     ->  lane {16'b0, element}
package ncore_ap_pkg;
  import ncore_isa_pkg::*;
  import ncore_fp_pkg::elem_bits;

  // log2 of an element's bytes: the shift from element strides to byte strides.
  function automatic logic [1:0] ap_esz_log2(dtype_e dt);
    unique case (dtype_bytes(dt))
      3'd4:    ap_esz_log2 = 2'd2;
      3'd2:    ap_esz_log2 = 2'd1;
      default: ap_esz_log2 = 2'd0;
    endcase
  endfunction

  // Elements per partition of an access pattern: the product of its free sizes (ap_t.size, whose
  // dims[d] is size[32 d +: 32]; Yosys 0.23 reads no multi-dimensional argument).
  function automatic logic [31:0] ap_elems(logic [127:0] size);
    ap_elems = size[31:0] * size[63:32] * size[95:64] * size[127:96];
  endfunction

  // The element of dtype `dt` in `word`, in the low bits: the whole word, the half or the byte
  // at byte offset `boff` (the element's byte address bits 1:0).
  function automatic logic [31:0] ap_elem_of_word(logic [31:0] word, logic [1:0] boff, dtype_e dt);
    ap_elem_of_word = elem_bits(word >> {boff, 3'b0}, dt);
  endfunction

  // The write byte enables of one element of dtype `dt` at byte offset 0 of its word (the
  // memory shifts them to the element's offset).
  function automatic logic [3:0] ap_elem_ben(dtype_e dt);
    ap_elem_ben = 4'((5'd1 << dtype_bytes(dt)) - 5'd1);
  endfunction

endpackage
