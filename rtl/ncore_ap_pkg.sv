// Operand helpers shared by the engines: what every engine that walks an access pattern
// (ncore_isa_pkg::ap_t) over the 32-bit words of a memory needs to know about its elements.
//
// An element of a 4-byte dtype is a whole word; a 2-byte element is the lower or the upper half
// of its word (byte address bit 1), and engines carry it in the low bits of a lane:
//
//   word  [31 .......... 16][15 ........... 0]
//          element at byte 2  element at byte 0     ->  lane {16'b0, element}
package ncore_ap_pkg;
  import ncore_isa_pkg::*;

  // log2 of an element's bytes: the shift from element strides to byte strides.
  function automatic logic [1:0] ap_esz_log2(dtype_e dt);
    return (dtype_bytes(dt) == 3'd4) ? 2'd2 : 2'd1;
  endfunction

  // Elements per partition of an access pattern: the product of its free sizes.
  function automatic logic [31:0] ap_elems(logic [3:0][31:0] size);
    return size[0] * size[1] * size[2] * size[3];
  endfunction

  // The element of dtype `dt` in `word`, in the low bits: the whole word, or its upper (hi) or
  // lower half.
  function automatic logic [31:0] ap_elem_of_word(logic [31:0] word, logic hi, dtype_e dt);
    if (dtype_bytes(dt) == 3'd4) return word;
    return {16'b0, hi ? word[31:16] : word[15:0]};
  endfunction

endpackage
