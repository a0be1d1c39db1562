// Floating-point numerics of the vector, scalar and DMA datapaths: dtype conversion to and from
// fp32, the fp32 ALU (add, subtract, multiply, max, min, divide, the comparisons, power, mod, fmod,
// the logical ops), square root and the scalar engine's activation functions. Engines widen every
// element to fp32 exactly, compute in IEEE-754 binary32 with round-to-nearest-even and no flush-to-zero, and round
// once to the destination dtype. Any NaN that comes out of a conversion or an arithmetic op is
// the canonical quiet NaN (fp32 0x7FC00000, bf16 0x7FC0, fp16 0x7E00, fp8_e4m3 0x7C, fp8_e5m2 0x7E); bit copies between equal
// dtypes do not come here and keep their bits. The C++ reference is firmware/include/ncore/numerics.hpp,
// built on the host's IEEE float arithmetic and checked against these functions by tb/unit/fp.
//
// These functions run in 128 lanes every cycle under Verilator, so they are written for
// simulation speed: straight-line code on machine-word-sized vectors (<= 64 bits), one variable
// shift per alignment or normalisation, a 6-step leading-zero count, no loops over bits.
// The arithmetic ones the activation functions call many times (add, multiply, divide, sqrt,
// round, the functions themselves) carry `verilator no_inline_task`: Verilator then emits each as
// one C++ function instead of a copy per call site (a metacomment, no hardware meaning). Inlined,
// the scalar engine's function unit was one 190,000-line C++ function that took most of a core's
// build time; a function that reads a package table cannot carry it (Verilator's IMPURE).
//
// Rounding layout shared by add, multiply and fp16 conversion: the kept significand is followed
// by a guard bit and a sticky bit (OR of everything below), and the rounded magnitude is formed as
//
//   {exp - 1, 23'b0} + {hidden, mantissa} + round_up
//
// so that a carry out of the mantissa steps the exponent, a subnormal (hidden = 0, exp = 1) comes
// out with a zero exponent field, and a carry into exponent 255 reads as infinity.
//
// Written in the subset of SystemVerilog that Debian's Yosys 0.23 reads (make synth,
// docs/synthesis.md): a function's result is assigned to its name (no `return`: the special cases are
// the first branches of an if-else chain), a value widened to an int is $signed({zeros, x}) (no
// int'(x) casts), tables are packed vectors with element i at bits [W i +: W], written from the
// last element to the first (no unpacked-array constants), and a struct argument is unpacked into
// variables of its fields by one concatenation (no member of an argument).
package ncore_fp_pkg;

  import ncore_isa_pkg::*;

  ///////////////
  // Constants //
  ///////////////

  localparam logic [31:0] F32CanonNan = 32'h7FC0_0000;
  localparam logic [15:0] Bf16CanonNan = 16'h7FC0;
  localparam logic [15:0] Fp16CanonNan = 16'h7E00;
  localparam logic [30:0] F32InfMag = 31'h7F80_0000;

  /////////////
  // Helpers //
  /////////////

  // NaN test on a magnitude (bits 30:0).
  function automatic logic f32_is_nan(logic [30:0] mag);
    f32_is_nan = (mag[30:23] == 8'hFF) && (mag[22:0] != 23'd0);
  endfunction

  // Leading zeros of a 64-bit word by halving (6 steps); 64 for zero.
  function automatic logic [6:0] fp_clz64(logic [63:0] x);
    logic [63:0] v;
    logic [6:0] n;
    v = x;
    n = 7'd0;
    if (v[63:32] == 32'd0) begin n = n + 7'd32; v = {v[31:0], 32'd0}; end
    if (v[63:48] == 16'd0) begin n = n + 7'd16; v = {v[47:0], 16'd0}; end
    if (v[63:56] == 8'd0) begin n = n + 7'd8; v = {v[55:0], 8'd0}; end
    if (v[63:60] == 4'd0) begin n = n + 7'd4; v = {v[59:0], 4'd0}; end
    if (v[63:62] == 2'd0) begin n = n + 7'd2; v = {v[61:0], 2'd0}; end
    if (!v[63]) n = n + (v[62] ? 7'd1 : 7'd2);
    fp_clz64 = n;
  endfunction

  // Leading zeros of a 32-bit word (5 steps); 32 for zero.
  function automatic logic [5:0] fp_clz32(logic [31:0] x);
    logic [31:0] v;
    logic [5:0] n;
    v = x;
    n = 6'd0;
    if (v[31:16] == 16'd0) begin n = n + 6'd16; v = {v[15:0], 16'd0}; end
    if (v[31:24] == 8'd0) begin n = n + 6'd8; v = {v[23:0], 8'd0}; end
    if (v[31:28] == 4'd0) begin n = n + 6'd4; v = {v[27:0], 4'd0}; end
    if (v[31:30] == 2'd0) begin n = n + 6'd2; v = {v[29:0], 2'd0}; end
    if (!v[31]) n = n + (v[30] ? 6'd1 : 6'd2);
    fp_clz32 = n;
  endfunction

  // Packs a rounded fp32 magnitude: exp_m1 = biased exponent - 1 (0 for subnormals), sig = the
  // 24-bit significand with its hidden bit, up = round up by one ulp. Overflow gives infinity.
  function automatic logic [30:0] f32_pack(logic [7:0] exp_m1, logic [23:0] sig, logic up);
    logic [31:0] mag;
    mag = {1'b0, exp_m1, 23'd0} + {8'd0, sig} + {31'd0, up};
    f32_pack = (mag >= {1'b0, F32InfMag}) ? F32InfMag : mag[30:0];
  endfunction

  /////////////////
  // Conversions //
  /////////////////

  // An integer element (in the LSBs of raw, sign- or zero-extended by its dtype) to fp32: exact
  // up to 2^24 in magnitude, rounded to nearest even beyond (32-bit values).
  function automatic logic [31:0] int_to_f32(logic [31:0] raw, dtype_e dt);
    logic signed [32:0] v;
    logic [31:0] m;
    unique case (dt)
      DT_INT8:   v = 33'($signed(raw[7:0]));
      DT_UINT8:  v = {25'd0, raw[7:0]};
      DT_INT16:  v = 33'($signed(raw[15:0]));
      DT_UINT16: v = {17'd0, raw[15:0]};
      DT_INT32:  v = 33'($signed(raw));
      default:   v = {1'b0, raw};
    endcase
    m = v[32] ? 32'(-v) : v[31:0];
    // m * 2^32 * 2^(158 - 190) = m
    if (m == 32'd0) int_to_f32 = 32'd0;
    else            int_to_f32 = f32_round(v[32], 158, {m, 32'd0}, 1'b0);
  endfunction

  // fp32 to an integer dtype's bits (in the LSBs, upper bits zero): rounded to the nearest
  // integer, ties to even, then saturated to the dtype's range; NaN gives 0.
  //
  // |f| < 0.5 (e < 126) rounds to 0. For e in 126..157 the value is below 2^31: the significand
  // shifted left by e - 118 holds it in 32.32 fixed point, whose fraction decides the rounding.
  // e = 158 is an integer in [2^31, 2^32); larger magnitudes saturate.
  function automatic logic [31:0] f32_to_int(logic [31:0] f, dtype_e dt);
    logic [7:0] e;
    logic [63:0] x;
    logic [32:0] mag;    // |rounded value|, saturated at 2^32
    logic signed [34:0] s, lo, hi;
    e = f[30:23];
    x = '0;
    if (e < 8'd126) mag = '0;
    else if (e <= 8'd157) begin
      x = {40'd0, 1'b1, f[22:0]} << (e - 8'd118);
      mag = {1'b0, x[63:32]} + {32'd0, x[31] & ((x[30:0] != 31'd0) | x[32])};
    end else if (e == 8'd158) mag = {1'b0, 1'b1, f[22:0], 8'd0};
    else mag = 33'h1_0000_0000;
    s = f[31] ? -(35'(mag)) : 35'(mag);
    unique case (dt)
      DT_INT8:   begin lo = -35'sd128;        hi = 35'sd127;        end
      DT_UINT8:  begin lo = 35'sd0;           hi = 35'sd255;        end
      DT_INT16:  begin lo = -35'sd32768;      hi = 35'sd32767;      end
      DT_UINT16: begin lo = 35'sd0;           hi = 35'sd65535;      end
      DT_INT32:  begin lo = -35'sd2147483648; hi = 35'sd2147483647; end
      default:   begin lo = 35'sd0;           hi = 35'sd4294967295; end
    endcase
    if (s < lo) s = lo;
    if (s > hi) s = hi;
    f32_to_int = f32_is_nan(f[30:0]) ? 32'd0 : elem_bits(s[31:0], dt);
  endfunction

  // The 8-bit floats (fp8_e4m3: ew = 4, mw = 3; fp8_e5m2: ew = 5, mw = 2) are IEEE-like: bias
  // 2^(ew-1) - 1, the top exponent for the infinities and NaNs, subnormals at exponent 0.
  //
  // One of them (bits 7:0 of raw) to fp32, exactly. A subnormal m * 2^(1 - bias - mw) has its
  // leading one at bit mw - 1 - lz of m, so it is 1.f * 2^(-bias - lz).
  function automatic logic [31:0] fp8_to_f32(logic [7:0] raw, int ew, int mw);
    int bias;
    logic [7:0] ex, man, top;
    logic [5:0] lz;
    bias = (1 << (ew - 1)) - 1;
    top = 8'((1 << ew) - 1);
    ex = {1'b0, raw[6:0]} >> mw;
    man = {1'b0, raw[6:0]} & 8'((1 << mw) - 1);
    lz = fp_clz32({man, 24'd0} << (8 - mw));
    if (ex == top) fp8_to_f32 = (man == 8'd0) ? {raw[7], F32InfMag} : F32CanonNan;
    else if (ex != 8'd0) fp8_to_f32 = {raw[7], 8'($signed({24'd0, ex}) - bias + 127), 23'({man, 23'd0} >> mw)};
    else if (man == 8'd0) fp8_to_f32 = {raw[7], 31'd0};
    else fp8_to_f32 = {raw[7], 8'(127 - bias - $signed({26'd0, lz})), 23'({man, 23'd0} << (lz + 6'd1) >> mw)};
  endfunction

  // fp32 to one of the 8-bit floats (in bits 7:0), rounding to nearest even, into the subnormals,
  // past the largest finite to infinity; a NaN becomes the canonical one (exponent all ones, the
  // mantissa's top bit set: 0x7C for fp8_e4m3, 0x7E for fp8_e5m2). As fp16 below: te is the
  // result's biased exponent; t = 1 - te (at most 31) shifts a subnormal result's significand
  // right, and the 48-bit word {sig, 24'b0} >> t keeps 1 + mw bits at its top, then a guard bit
  // and the sticky bits. The hidden bit in `kept` adds the last 1 << mw of a normal result's base.
  function automatic logic [7:0] fp8_from_f32(logic [31:0] f, int ew, int mw);
    int bias, te, t;
    logic [47:0] w;
    logic [7:0] kept, mag;
    logic up;
    bias = (1 << (ew - 1)) - 1;
    te = $signed({24'd0, f[30:23]}) - 127 + bias;
    t = (te >= 1) ? 0 : ((1 - te > 31) ? 31 : 1 - te);
    w = {f[30:23] != 8'd0, f[22:0], 24'd0} >> t;
    kept = 8'(w >> (47 - mw));
    up = w[46 - mw] & (((w & ~(48'hFFFF_FFFF_FFFF << (46 - mw))) != 48'd0) | kept[0]);
    mag = ((te >= 1) ? 8'((te - 1) << mw) : 8'd0) + kept + {7'd0, up};
    if (f32_is_nan(f[30:0])) fp8_from_f32 = 8'(((1 << (ew + 1)) - 1) << (mw - 1));
    else if (te >= (1 << ew) - 1 || mag >= 8'(((1 << ew) - 1) << mw))
      fp8_from_f32 = {f[31], 7'(((1 << ew) - 1) << mw)};
    else fp8_from_f32 = {f[31], mag[6:0]};
  endfunction

  // Element bits (in the LSBs of raw) to fp32, exactly (32-bit integers beyond 2^24: nearest
  // even). NaNs become the canonical fp32 NaN. Codes outside the enumeration read as fp32. Work
  // is done only in the branch that needs it (Verilator then skips it for the other dtypes).
  function automatic logic [31:0] fp_to_f32(logic [31:0] raw, dtype_e dt);
    logic [31:0] r;
    logic [9:0] m16;
    logic [4:0] e16;
    logic [5:0] lz;
    m16 = raw[9:0];
    e16 = raw[14:10];
    unique case (dt)
      DT_BF16: r = {raw[15:0], 16'd0};
      DT_FP16: begin
        if (e16 == 5'd31) r = {raw[15], 8'hFF, m16, 13'd0};
        else if (e16 != 5'd0) r = {raw[15], 3'd0, e16, m16, 13'd0} + 32'h3800_0000;  // bias 15 -> 127
        else if (m16 == 10'd0) r = {raw[15], 31'd0};
        else begin
          // Subnormal m * 2^-24: the leading one at bit 9 - lz gives 2^(-15 - lz).
          lz = fp_clz32({m16, 22'd0});
          r = {raw[15], 8'd112 - {2'd0, lz}, m16 << (lz + 6'd1), 13'd0};
        end
      end
      DT_TF32: r = {raw[31:13], 13'd0};
      DT_FP8_E4M3: r = fp8_to_f32(raw[7:0], 4, 3);
      DT_FP8_E5M2: r = fp8_to_f32(raw[7:0], 5, 2);
      DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32: r = int_to_f32(raw, dt);
      default: r = raw;
    endcase
    fp_to_f32 = f32_is_nan(r[30:0]) ? F32CanonNan : r;
  endfunction

  // fp32 to element bits (in the LSBs, upper bits zero), rounding to nearest even. fp16 rounds to
  // its subnormals and overflows to infinity; NaNs become the dtype's canonical NaN.
  //
  // fp16 keeps the top 11 bits of the 24-bit significand (normal results) or fewer (subnormal
  // results: 126 - exp of them). With t = shift - 13 in 0..12 the kept bits, guard and sticky sit
  // at fixed places of one 36-bit word:
  //
  //   {sig, 12'b0} >> t  =  [35:25] kept (11 bits) | [24] guard | [23:0] sticky
  //
  // and the result magnitude is base + kept + up, with base = (e - 113) << 10 for normal results
  // (the hidden bit in `kept` adds the last 1 << 10) and 0 for subnormal ones.
  function automatic logic [31:0] fp_from_f32(logic [31:0] f, dtype_e dt);
    logic [31:0] r;
    logic nan;
    logic [15:0] bf;
    logic [7:0] e;
    logic [3:0] t;
    logic [35:0] w;
    logic [14:0] base;
    logic up;
    nan = f32_is_nan(f[30:0]);
    e = f[30:23];
    unique case (dt)
      DT_BF16: begin
        // Drop 16 bits; round up when above half, or at half with an odd kept LSB. A carry out of
        // the mantissa steps the exponent (and 0x7F7F rounds up to infinity 0x7F80).
        bf = f[31:16] + {15'd0, f[15] & ((f[14:0] != 15'd0) | f[16])};
        r = nan ? {16'd0, Bf16CanonNan} : {16'd0, bf};
      end
      DT_FP16: begin
        if (e >= 8'd113) begin
          t = 4'd0;
          base = {e[4:0] - 5'd17, 10'd0};  // (e - 113) mod 32: exact for e in 113..142
        end else begin
          t = (e <= 8'd101) ? 4'd12 : 4'(8'd113 - e);
          base = 15'd0;
        end
        w = {e != 8'd0, f[22:0], 12'd0} >> t;
        up = w[24] & ((w[23:0] != 24'd0) | w[25]);
        if (nan) r = {16'd0, Fp16CanonNan};
        else if (e >= 8'd143) r = {16'd0, f[31], 15'h7C00};  // |f| >= 2^16 (and inf)
        else r = {16'd0, f[31], base + {4'd0, w[35:25]} + {14'd0, up}};
      end
      DT_TF32: begin
        // As bf16, 13 bits dropped instead of 16 (a carry out of the mantissa steps the exponent).
        r = f + {19'd0, f[12] & ((f[11:0] != 12'd0) | f[13]), 12'd0};
        r = nan ? F32CanonNan : {r[31:13], 13'd0};
      end
      DT_FP8_E4M3: r = {24'd0, fp8_from_f32(f, 4, 3)};
      DT_FP8_E5M2: r = {24'd0, fp8_from_f32(f, 5, 2)};
      DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32: r = f32_to_int(f, dt);
      default: r = nan ? F32CanonNan : f;
    endcase
    fp_from_f32 = r;
  endfunction

  ///////////////////////
  // fp32 arithmetic   //
  ///////////////////////

  // a + b, IEEE binary32, RNE, subnormals kept. Exact zero sums are +0 unless both are -0.
  function automatic logic [31:0] f32_add(logic [31:0] a, logic [31:0] b);
    /* verilator no_inline_task */
    logic [31:0] r;
    logic a_nan, b_nan, a_inf, b_inf;
    logic [31:0] l, s;          // larger and smaller magnitude
    logic [7:0] el, es;         // effective exponents (subnormals: 1)
    logic [7:0] d;
    logic [26:0] xl, xs_full, xs;  // significand, guard, round, sticky
    logic sticky;
    logic [27:0] sum;
    logic [26:0] norm;
    logic [5:0] lz;
    logic [7:0] shl;
    logic [7:0] e;
    logic up;
    a_nan = f32_is_nan(a[30:0]);
    b_nan = f32_is_nan(b[30:0]);
    a_inf = a[30:0] == F32InfMag;
    b_inf = b[30:0] == F32InfMag;
    if (a[30:0] >= b[30:0]) begin l = a; s = b; end
    else begin l = b; s = a; end
    el = (l[30:23] == 8'd0) ? 8'd1 : l[30:23];
    es = (s[30:23] == 8'd0) ? 8'd1 : s[30:23];
    d = el - es;
    xl = {l[30:23] != 8'd0, l[22:0], 3'd0};
    xs_full = {s[30:23] != 8'd0, s[22:0], 3'd0};
    if (d >= 8'd27) begin
      xs = {26'd0, xs_full != 27'd0};
    end else begin
      sticky = (xs_full & ~(27'h7FF_FFFF << d)) != 27'd0;
      xs = (xs_full >> d) | {26'd0, sticky};
    end
    if (l[31] == s[31]) sum = {1'b0, xl} + {1'b0, xs};
    else sum = {1'b0, xl} - {1'b0, xs};
    if (sum[27]) begin
      norm = {sum[27:2], sum[1] | sum[0]};
      e = el + 8'd1;
    end else begin
      // Normalise left, but not below exponent 1 (then the result is subnormal).
      lz = fp_clz32({sum[26:0], 5'd0});
      shl = ({2'd0, lz} < el - 8'd1) ? {2'd0, lz} : el - 8'd1;
      norm = sum[26:0] << shl;
      e = el - shl;
    end
    up = norm[2] & ((norm[1:0] != 2'd0) | norm[3]);
    if (a_nan || b_nan || (a_inf && b_inf && (a[31] != b[31]))) r = F32CanonNan;
    else if (a_inf) r = a;
    else if (b_inf) r = b;
    else if (sum == 28'd0) r = {l[31] & s[31], 31'd0};
    else r = {l[31], f32_pack(e - 8'd1, norm[26:3], up)};
    f32_add = r;
  endfunction

  // a * b, IEEE binary32, RNE, subnormal inputs and outputs kept.
  function automatic logic [31:0] f32_mul(logic [31:0] a, logic [31:0] b);
    /* verilator no_inline_task */
    logic [31:0] r;
    logic sign;
    logic a_nan, b_nan, a_inf, b_inf, a_zero, b_zero;
    logic [9:0] ea, eb;         // effective exponents (subnormals: 1)
    logic [47:0] prod;          // exact product, binary point after bit 46
    logic [6:0] lz;
    logic signed [10:0] e;      // biased exponent of the product once normalised
    logic signed [10:0] lsh;    // subnormal result: left shift (negative: right shift)
    logic [6:0] rs;
    logic [47:0] norm;
    logic sticky;
    logic up;
    logic [7:0] exp_m1;
    sign = a[31] ^ b[31];
    a_nan = f32_is_nan(a[30:0]);
    b_nan = f32_is_nan(b[30:0]);
    a_inf = a[30:0] == F32InfMag;
    b_inf = b[30:0] == F32InfMag;
    a_zero = a[30:0] == 31'd0;
    b_zero = b[30:0] == 31'd0;
    ea = (a[30:23] == 8'd0) ? 10'd1 : {2'd0, a[30:23]};
    eb = (b[30:23] == 8'd0) ? 10'd1 : {2'd0, b[30:23]};
    prod = {24'd0, a[30:23] != 8'd0, a[22:0]} * {24'd0, b[30:23] != 8'd0, b[22:0]};
    lz = fp_clz64({prod, 16'd0});
    e = $signed({1'b0, ea}) + $signed({1'b0, eb}) - 11'sd126 - $signed({4'd0, lz});
    lsh = $signed({1'b0, ea}) + $signed({1'b0, eb}) - 11'sd127;
    sticky = 1'b0;
    if (e >= 11'sd1) begin
      norm = prod << lz;
      exp_m1 = 8'(e - 11'sd1);
    end else begin
      exp_m1 = 8'd0;
      if (lsh >= 11'sd0) begin
        norm = prod << lsh;
      end else begin
        rs = (lsh <= -11'sd48) ? 7'd48 : 7'(-lsh);
        norm = prod >> rs;
        sticky = (prod & ~(48'hFFFF_FFFF_FFFF << rs)) != 48'd0;
      end
    end
    up = norm[23] & ((norm[22:0] != 23'd0) | sticky | norm[24]);
    if (a_nan || b_nan || (a_inf && b_zero) || (b_inf && a_zero)) r = F32CanonNan;
    else if (a_inf || b_inf || (e >= 11'sd255)) r = {sign, F32InfMag};
    else if (a_zero || b_zero) r = {sign, 31'd0};
    else r = {sign, f32_pack(exp_m1, norm[47:24], up)};
    f32_mul = r;
  endfunction

  // Maps fp32 bits to an unsigned key in numeric order (-0 just below +0); NaNs excluded.
  function automatic logic [31:0] f32_order_key(logic [31:0] f);
    f32_order_key = f[31] ? ~f : {1'b1, f[30:0]};
  endfunction

  // max(a, b): NaN if either is NaN; max(-0, +0) = +0.
  function automatic logic [31:0] f32_max(logic [31:0] a, logic [31:0] b);
    f32_max = (f32_is_nan(a[30:0]) || f32_is_nan(b[30:0])) ? F32CanonNan
         : (f32_order_key(a) >= f32_order_key(b)) ? a : b;
  endfunction

  // min(a, b): NaN if either is NaN; min(-0, +0) = -0.
  function automatic logic [31:0] f32_min(logic [31:0] a, logic [31:0] b);
    f32_min = (f32_is_nan(a[30:0]) || f32_is_nan(b[30:0])) ? F32CanonNan
         : (f32_order_key(a) <= f32_order_key(b)) ? a : b;
  endfunction

  // a - b: a + (-b), as IEEE defines it.
  function automatic logic [31:0] f32_sub(logic [31:0] a, logic [31:0] b);
    f32_sub = f32_add(a, {~b[31], b[30:0]});
  endfunction

  // IEEE comparisons of values that are not NaN (-0 == +0).
  function automatic logic f32_lt(logic [31:0] a, logic [31:0] b);
    f32_lt = (a[30:0] != 31'd0 || b[30:0] != 31'd0) && (f32_order_key(a) < f32_order_key(b));
  endfunction
  function automatic logic f32_eq(logic [31:0] a, logic [31:0] b);
    f32_eq = (a == b) || (a[30:0] == 31'd0 && b[30:0] == 31'd0);
  endfunction

  // sign * sig * 2^(e - 190) rounded to fp32, nearest even, into the subnormals, overflow to
  // infinity; sig nonzero, sticky_in: nonzero bits below sig. With sig's leading one at bit 63,
  // e is the biased exponent of the result. Shared by divide and sqrt.
  function automatic logic [31:0] f32_round(logic sign, int e, logic [63:0] sig, logic sticky_in);
    /* verilator no_inline_task */
    logic [63:0] n;
    logic [6:0] lz;
    logic st, up;
    int be, rs;
    logic [7:0] exp_m1;
    lz = fp_clz64(sig);
    n = sig << lz;
    be = e - $signed({25'd0, lz});
    st = sticky_in;
    exp_m1 = 8'd0;
    if (be >= 255) begin
      f32_round = {sign, F32InfMag};
    end else begin
      if (be < 1) begin
        rs = (1 - be > 63) ? 63 : 1 - be;
        st = st | ((n & ~(64'hFFFF_FFFF_FFFF_FFFF << rs)) != 64'd0);
        n = n >> rs;
      end else begin
        exp_m1 = 8'(be - 1);
      end
      up = n[39] & ((n[38:0] != 39'd0) | st | n[40]);
      f32_round = {sign, f32_pack(exp_m1, n[63:40], up)};
    end
  endfunction

  // A finite nonzero fp32 magnitude as a significand with its leading one at bit 23 and the
  // biased exponent that goes with it (below 1 for subnormals): value = m * 2^(e - 150).
  function automatic logic [23:0] f32_norm_sig(logic [30:0] mag, output int e);
    logic [5:0] lz;
    lz = fp_clz32({mag[30:23] != 8'd0, mag[22:0], 8'd0});
    e = ((mag[30:23] == 8'd0) ? 1 : $signed({24'd0, mag[30:23]})) - $signed({26'd0, lz});
    f32_norm_sig = {mag[30:23] != 8'd0, mag[22:0]} << lz;
  endfunction

  // a / b, IEEE binary32, correctly rounded: the 64-by-24-bit integer quotient of the
  // significands (at least 40 bits) and its remainder as the sticky bit.
  function automatic logic [31:0] f32_div(logic [31:0] a, logic [31:0] b);
    /* verilator no_inline_task */
    logic sign, a_nan, b_nan, a_inf, b_inf, a_zero, b_zero;
    logic [23:0] ma, mb;
    logic [63:0] num, q;
    int ea, eb;
    sign = a[31] ^ b[31];
    a_nan = f32_is_nan(a[30:0]);
    b_nan = f32_is_nan(b[30:0]);
    a_inf = a[30:0] == F32InfMag;
    b_inf = b[30:0] == F32InfMag;
    a_zero = a[30:0] == 31'd0;
    b_zero = b[30:0] == 31'd0;
    if (a_nan || b_nan || (a_inf && b_inf) || (a_zero && b_zero)) begin
      f32_div = F32CanonNan;
    end else if (a_inf || b_zero) begin
      f32_div = {sign, F32InfMag};
    end else if (a_zero || b_inf) begin
      f32_div = {sign, 31'd0};
    end else begin
      ma = f32_norm_sig(a[30:0], ea);
      mb = f32_norm_sig(b[30:0], eb);
      num = {ma, 40'd0};
      q = num / {40'd0, mb};
      f32_div = f32_round(sign, ea - eb + 150, q, (num % {40'd0, mb}) != 64'd0);
    end
  endfunction

  // sqrt(a), IEEE binary32, correctly rounded: sqrt(-0) = -0, sqrt(a < 0) = NaN. The integer
  // square root of the significand, scaled to an even exponent and 61 to 63 bits, by Newton's
  // iteration from above (4 steps from the arithmetic-geometric bound; 3 already land within one
  // of the root), then corrected down once; its remainder is the sticky bit.
  function automatic logic [31:0] f32_sqrt(logic [31:0] a);
    /* verilator no_inline_task */
    logic [23:0] m;
    logic [63:0] n, y;
    int e, e2;
    if (f32_is_nan(a[30:0]) || (a[31] && a[30:0] != 31'd0)) begin
      f32_sqrt = F32CanonNan;
    end else if (a[30:0] == 31'd0 || a[30:0] == F32InfMag) begin
      f32_sqrt = a;
    end else begin
      m = f32_norm_sig(a[30:0], e);
      // a = n * 2^e2 with e2 even, n in [2^61, 2^63)
      if (e[0]) begin n = {1'b0, m, 39'd0}; e2 = e - 189; end
      else begin n = {2'b0, m, 38'd0}; e2 = e - 188; end
      y = (((n >> 31) + 64'h8000_0000) >> 1) + 64'd1;  // (n / 2^31 + 2^31) / 2 >= sqrt(n)
      y = (y + n / y) >> 1;
      y = (y + n / y) >> 1;
      y = (y + n / y) >> 1;
      y = (y + n / y) >> 1;
      if (y * y > n) y = y - 64'd1;
      f32_sqrt = f32_round(1'b0, 190 + (e2 >>> 1), y, y * y != n);
    end
  endfunction

  // A comparison's result: 1.0 or +0.
  function automatic logic [31:0] f32_truth(logic t);
    f32_truth = t ? 32'h3F80_0000 : 32'd0;
  endfunction

  //////////////////////////////////////////
  // Scalar-engine activation functions   //
  //////////////////////////////////////////

  // The transcendental functions: fixed sequences of fp32 operations (f32_add, f32_sub, f32_mul,
  // f32_div, each rounded to nearest even) and exact bit operations, the same sequences, step for
  // step, as firmware/include/ncore/act_math.hpp, which documents each algorithm;
  // docs/hardware.md gives their measured error bounds. Their constants (ActLog2e, ActExpQ, ...)
  // are ncore_isa_pkg's, generated with act_consts_gen.hpp from the ISA description.
  localparam logic [31:0] F32One      = 32'h3F80_0000;
  localparam logic [31:0] F32Two      = 32'h4000_0000;
  localparam logic [31:0] F32Half     = 32'h3F00_0000;

  // 2^k for k in -126..127.
  function automatic logic [31:0] f32_pow2(int k);
    f32_pow2 = {1'b0, 8'(k + 127), 23'd0};
  endfunction

  // e^x: k = round(x log2 e), r = (x - k ln2_hi) - k ln2_lo, p = 1 + (r + r^2 q(r)),
  // (p 2^(k >> 1)) 2^(k - (k >> 1)).
  function automatic logic [31:0] act_exp(logic [31:0] x);
    /* verilator no_inline_task */
    logic [31:0] s, kf, r, q, p;
    int k, k1;
    if (f32_is_nan(x[30:0])) begin
      act_exp = F32CanonNan;
    end else if (f32_lt(ActExpHi, x)) begin
      act_exp = {1'b0, F32InfMag};
    end else if (f32_lt(x, ActExpLo)) begin
      act_exp = 32'd0;
    end else begin
      s = f32_add(f32_mul(x, ActLog2e), ActMagic);
      k = $signed(s) - $signed(ActMagic);
      kf = f32_sub(s, ActMagic);
      r = f32_sub(f32_sub(x, f32_mul(kf, ActLn2Hi)), f32_mul(kf, ActLn2Lo));
      q = ActExpQ[32*5 +: 32];
      for (int i = 4; i >= 0; i--) q = f32_add(f32_mul(q, r), ActExpQ[32*i +: 32]);
      p = f32_add(F32One, f32_add(r, f32_mul(f32_mul(r, r), q)));
      k1 = k >>> 1;
      act_exp = f32_mul(f32_mul(p, f32_pow2(k1)), f32_pow2(k - k1));
    end
  endfunction

  // log x = k ln2_hi - ((h - (s (h + R) + k ln2_lo)) - f), x = 2^k (1 + f), s = f / (2 + f).
  function automatic logic [31:0] act_log(logic [31:0] x);
    /* verilator no_inline_task */
    logic [31:0] ix, mb, f, s, z, w, rr, h, dk;
    int k;
    if (f32_is_nan(x[30:0])) begin
      act_log = F32CanonNan;
    end else if (x[30:0] == 31'd0) begin
      act_log = {1'b1, F32InfMag};
    end else if (x[31]) begin
      act_log = F32CanonNan;
    end else if (x[30:0] == F32InfMag) begin
      act_log = x;
    end else begin
      ix = x;
      k = 0;
      if (x[30:23] == 8'd0) begin
        ix = f32_mul(x, ActTwo25);
        k = -25;
      end
      k = k + $signed({24'd0, ix[30:23]}) - 127;
      mb = {ix[31], 8'h7F, ix[22:0]};  // 1.m (ix is positive)
      if (mb > ActSqrt2) begin
        mb = mb - 32'h0080_0000;
        k = k + 1;
      end
      f = f32_sub(mb, F32One);
      s = f32_div(f, f32_add(F32Two, f));
      z = f32_mul(s, s);
      w = f32_mul(z, z);
      rr = f32_add(f32_mul(z, f32_add(ActLg[31:0], f32_mul(w, ActLg[95:64]))),
                   f32_mul(w, f32_add(ActLg[63:32], f32_mul(w, ActLg[127:96]))));
      h = f32_mul(f32_mul(F32Half, f), f);
      dk = f32_sub(32'($signed(ActMagic) + k), ActMagic);  // k as fp32, exactly
      act_log = f32_sub(f32_mul(dk, ActLn2Hi),
                        f32_sub(f32_sub(h, f32_add(f32_mul(s, f32_add(h, rr)), f32_mul(dk, ActLn2Lo))), f));
    end
  endfunction

  // tanh: a = |x| < 0.625: a + a (z q(z)), z = a^2; else 1 - 2 / (exp(2a) + 1); sign of x.
  function automatic logic [31:0] act_tanh(logic [31:0] x);
    /* verilator no_inline_task */
    logic [31:0] a, z, q, r;
    a = {1'b0, x[30:0]};
    if (f32_is_nan(x[30:0])) begin
      r = F32CanonNan;
    end else if (f32_lt(a, ActTanhSmall)) begin
      z = f32_mul(a, a);
      q = ActTanhQ[32*5 +: 32];
      for (int i = 4; i >= 0; i--) q = f32_add(f32_mul(q, z), ActTanhQ[32*i +: 32]);
      r = f32_add(a, f32_mul(a, f32_mul(z, q))) | {x[31], 31'd0};
    end else begin
      r = f32_sub(F32One, f32_div(F32Two, f32_add(act_exp(f32_add(a, a)), F32One))) | {x[31], 31'd0};
    end
    act_tanh = r;
  endfunction

  // sigmoid: sign bit set e / (1 + e), e = exp(x); clear 1 / (1 + exp(-x)).
  function automatic logic [31:0] act_sigmoid(logic [31:0] x);
    /* verilator no_inline_task */
    logic [31:0] e;
    if (f32_is_nan(x[30:0])) begin
      act_sigmoid = F32CanonNan;
    end else if (x[31]) begin
      e = act_exp(x);
      act_sigmoid = f32_div(e, f32_add(F32One, e));
    end else begin
      act_sigmoid = f32_div(F32One, f32_add(F32One, act_exp({1'b1, x[30:0]})));
    end
  endfunction

  // softplus: max(x, +0) + log1p(exp(-|x|)), log1p(e) = e when 1 + e rounds to 1, else
  // log(1 + e) * (e / ((1 + e) - 1)).
  function automatic logic [31:0] act_softplus(logic [31:0] x);
    /* verilator no_inline_task */
    logic [31:0] e, w, l, m;
    if (f32_is_nan(x[30:0])) begin
      act_softplus = F32CanonNan;
    end else begin
      e = act_exp({1'b1, x[30:0]});
      w = f32_add(F32One, e);
      if (w == F32One) l = e;
      else l = f32_mul(act_log(w), f32_div(e, f32_sub(w, F32One)));
      m = (!x[31] && x[30:0] != 31'd0) ? x : 32'd0;
      act_softplus = f32_add(m, l);
    end
  endfunction

  // erf and gelu through erfc(z), z >= 0 (act_math.hpp): the coefficients, and per interval k of
  // z the center of t = 1/z - c and G's coefficients from degree 0 (ActErfcG element 9 k + i).

  // c[0] + s (c[1] + s (... + s c[6])), Horner from the highest coefficient.
  function automatic logic [31:0] f32_horner7(logic [223:0] c, logic [31:0] s);
    logic [31:0] p;
    p = c[32*6 +: 32];
    for (int i = 5; i >= 0; i--) p = f32_add(f32_mul(p, s), c[32*i +: 32]);
    f32_horner7 = p;
  endfunction

  // z + z P(z z), 0 <= z < 0.84375.
  function automatic logic [31:0] act_erf_small(logic [31:0] z);
    /* verilator no_inline_task */
    act_erf_small = f32_add(z, f32_mul(z, f32_horner7(ActErfP, f32_mul(z, z))));
  endfunction

  // erfc(z), z >= 0: 1 - erf_small(z) below 0.84375, +0 from 10.5, else
  // (exp(-qh) exp(-ql)) G(1/z - c) on z's interval (qh + ql = z^2).
  function automatic logic [31:0] act_erfc_pos(logic [31:0] z, logic [31:0] qh, logic [31:0] ql);
    logic [31:0] t, g;
    logic [2:0] k;
    if (f32_lt(z, ActErfSmall)) begin
      act_erfc_pos = f32_sub(F32One, act_erf_small(z));
    end else if (!f32_lt(z, ActErfcZero)) begin
      act_erfc_pos = 32'd0;
    end else begin
      k = 3'd0;
      for (int j = 0; j < 4; j++) if (!f32_lt(z, ActErfcBreak[32*j +: 32])) k = 3'(j + 1);  // breaks ascend
      t = f32_sub(f32_div(F32One, z), ActErfcG[32*(9*k) +: 32]);
      g = ActErfcG[32*(9*k + 8) +: 32];
      for (int i = 7; i >= 1; i--) g = f32_add(f32_mul(g, t), ActErfcG[32*(9*k + i) +: 32]);
      act_erfc_pos = f32_mul(f32_mul(act_exp({~qh[31], qh[30:0]}), act_exp({~ql[31], ql[30:0]})), g);
    end
  endfunction

  // erf: a = |x|; erf_small(a) below 0.84375, 1 from 4, else 1 - erfc_pos(a) with
  // a^2 = h h + (a - h) (a + h), h = a with its 12 low bits cleared; the sign of x.
  function automatic logic [31:0] act_erf(logic [31:0] x);
    logic [31:0] a, h, r;
    a = {1'b0, x[30:0]};
    if (f32_is_nan(x[30:0])) r = F32CanonNan;
    else if (f32_lt(a, ActErfSmall)) r = act_erf_small(a) | {x[31], 31'd0};
    else if (!f32_lt(a, ActErfOne)) r = F32One | {x[31], 31'd0};
    else begin
      h = {a[31:12], 12'd0};
      r = f32_sub(F32One, act_erfc_pos(a, f32_mul(h, h), f32_mul(f32_sub(a, h), f32_add(a, h)))) | {x[31], 31'd0};
    end
    act_erf = r;
  endfunction

  // gelu = 0.5 x erfc(-x / sqrt 2): e = erfc_pos(|x| (1/sqrt 2)) with x^2 / 2 split as in erf;
  // x < 0 (sign bit): (0.5 x) e, else x (1 - 0.5 e).
  function automatic logic [31:0] act_gelu(logic [31:0] x);
    logic [31:0] h, e;
    if (f32_is_nan(x[30:0])) begin
      act_gelu = F32CanonNan;
    end else begin
      h = {x[31:12], 12'd0};
      e = act_erfc_pos(f32_mul({1'b0, x[30:0]}, ActInvSqrt2), f32_mul(F32Half, f32_mul(h, h)),
                       f32_mul(F32Half, f32_mul(f32_sub(x, h), f32_add(x, h))));
      if (x[31]) act_gelu = f32_mul(f32_mul(F32Half, x), e);
      else       act_gelu = f32_mul(x, f32_sub(F32One, f32_mul(F32Half, e)));
    end
  endfunction

  // trunc, floor, ceil (exact): |x| >= 2^23 and the infinities are integers, |x| < 1 truncates to
  // a zero of x's sign, otherwise the fraction bits are cleared; floor and ceil step by one.
  function automatic logic [31:0] act_trunc(logic [31:0] x);
    /* verilator no_inline_task */
    if (f32_is_nan(x[30:0])) act_trunc = F32CanonNan;
    else if (x[30:23] >= 8'd150) act_trunc = x;
    else if (x[30:23] < 8'd127) act_trunc = {x[31], 31'd0};
    else act_trunc = x & ~(32'h007F_FFFF >> (x[30:23] - 8'd127));
  endfunction
  // floor (up = 0) steps a truncated negative non-integer down by one, ceil (up = 1) a positive one up.
  function automatic logic [31:0] act_floor_ceil(logic [31:0] x, logic up);
    /* verilator no_inline_task */
    logic [31:0] t;
    if (f32_is_nan(x[30:0])) begin
      act_floor_ceil = F32CanonNan;
    end else begin
      t = act_trunc(x);
      if (up ? f32_lt(t, x) : f32_lt(x, t)) act_floor_ceil = f32_add(t, {~up, F32One[30:0]});
      else act_floor_ceil = t;
    end
  endfunction

  // sin, cos, tan (act_math.hpp): |x| below fp32 pi/4 as it is, else the exact integer reduction:
  // 96 bits of 2/pi (ActTwoOverPi: 32 zero bits, then 224 bits of 2/pi) from the bit of weight
  // 2^(1 - E), |x| = m 2^E, times m: bits 95:94 are k mod 4, 93:0 the fraction; the top 32 bits
  // of |fraction| times pi/2 (ActPio2Fix = pi/2 2^31), rounded once.

  // a = |x| >= pi/4, finite: r with |x| = k pi/2 + r (mod 2 pi), |r| <= pi/4.
  function automatic logic [31:0] act_trig_reduce(logic [30:0] a, output logic [1:0] k);
    /* verilator no_inline_task */
    logic [95:0] w, p;
    logic [127:0] f;
    logic [63:0] q;
    logic neg;
    int e, lz;
    e = $signed({24'd0, a[30:23]}) - 150;
    w = 96'(ActTwoOverPi >> (160 - (e + 30)));  // bits e + 30 .. e + 125, bit 0 the MSB
    p = {72'd0, 1'b1, a[22:0]} * w;  // mod 2^96: the bits above add multiples of 4
    k = p[95:94];
    f = {34'd0, p[93:0]};
    neg = 1'b0;
    if (f[93]) begin
      k = k + 2'd1;
      f = (128'd1 << 94) - f;
      neg = 1'b1;
    end
    if (f == 128'd0) begin
      act_trig_reduce = {neg, 31'd0};
    end else begin
      f = f << 34;
      lz = (f[127:64] != 64'd0) ? $signed({25'd0, fp_clz64(f[127:64])}) : 64 + $signed({25'd0, fp_clz64(f[63:0])});
      f = f << lz;
      q = {32'd0, f[127:96]} * {32'd0, ActPio2Fix};
      act_trig_reduce = f32_round(neg, 127 - lz, q, 1'b0);
    end
  endfunction

  function automatic logic [31:0] act_sin_poly(logic [31:0] r);
    /* verilator no_inline_task */
    logic [31:0] z, s;
    z = f32_mul(r, r);
    s = ActSinS[32*3 +: 32];
    for (int i = 2; i >= 0; i--) s = f32_add(f32_mul(s, z), ActSinS[32*i +: 32]);
    act_sin_poly = f32_add(r, f32_mul(r, f32_mul(z, s)));
  endfunction
  function automatic logic [31:0] act_cos_poly(logic [31:0] r);
    /* verilator no_inline_task */
    logic [31:0] z, c, hz, w;
    z = f32_mul(r, r);
    c = ActCosC[32*3 +: 32];
    for (int i = 2; i >= 0; i--) c = f32_add(f32_mul(c, z), ActCosC[32*i +: 32]);
    hz = f32_mul(F32Half, z);
    w = f32_sub(F32One, hz);
    act_cos_poly = f32_add(w, f32_add(f32_sub(f32_sub(F32One, w), hz), f32_mul(f32_mul(z, z), c)));
  endfunction

  // The reduced argument of |x| (x finite) and its quadrant.
  function automatic logic [31:0] act_trig_arg(logic [30:0] a, output logic [1:0] k);
    k = 2'd0;
    if (f32_lt({1'b0, a}, ActPio4)) act_trig_arg = {1'b0, a};
    else act_trig_arg = act_trig_reduce(a, k);
  endfunction

  // fn: 0 sin, 1 cos, 2 tan.
  function automatic logic [31:0] act_trig(logic [1:0] fn, logic [31:0] x);
    /* verilator no_inline_task */
    logic [31:0] r, s, c, v;
    logic [1:0] k;
    if (x[30:23] == 8'hFF) begin
      act_trig = F32CanonNan;
    end else begin
      r = act_trig_arg(x[30:0], k);
      unique case (fn)
        2'd0: act_trig = (k[0] ? act_cos_poly(r) : act_sin_poly(r)) ^ {k[1] ^ x[31], 31'd0};
        2'd1: act_trig = (k[0] ? act_sin_poly(r) : act_cos_poly(r)) ^ {k[1] ^ k[0], 31'd0};
        default: begin
          s = act_sin_poly(r);
          c = act_cos_poly(r);
          v = k[0] ? f32_div({~c[31], c[30:0]}, s) : f32_div(s, c);
          act_trig = v ^ {x[31], 31'd0};
        end
      endcase
    end
  endfunction

  // arctan: reduction to |t| < 7/16 about 0, 1/2, 1, 3/2 or infinity (act_math.hpp).
  localparam logic [31:0] F32OneHalf = 32'h3FC0_0000;

  function automatic logic [31:0] act_atan_tail(logic [31:0] t);  // t - atan(t)
    /* verilator no_inline_task */
    logic [31:0] z;
    z = f32_mul(t, t);
    act_atan_tail = f32_mul(t, f32_mul(z, f32_horner7(ActAtanP, z)));
  endfunction
  function automatic logic [31:0] act_arctan(logic [31:0] x);
    /* verilator no_inline_task */
    logic [31:0] a, t, r;
    logic [1:0] i;
    a = {1'b0, x[30:0]};
    if (f32_is_nan(x[30:0])) begin
      r = F32CanonNan;
    end else if (f32_lt(a, ActAtanBreak[32*0 +: 32])) begin
      r = f32_sub(a, act_atan_tail(a)) | {x[31], 31'd0};
    end else begin
      if (f32_lt(a, ActAtanBreak[32*1 +: 32])) begin
        i = 2'd0;
        t = f32_div(f32_sub(f32_mul(F32Two, a), F32One), f32_add(F32Two, a));
      end else if (f32_lt(a, ActAtanBreak[32*2 +: 32])) begin
        i = 2'd1;
        t = f32_div(f32_sub(a, F32One), f32_add(a, F32One));
      end else if (f32_lt(a, ActAtanBreak[32*3 +: 32])) begin
        i = 2'd2;
        t = f32_div(f32_sub(a, F32OneHalf), f32_add(F32One, f32_mul(F32OneHalf, a)));
      end else begin
        i = 2'd3;
        t = f32_div(32'hBF80_0000, a);
      end
      r = f32_sub(ActAtanHi[32*i +: 32], f32_sub(f32_sub(act_atan_tail(t), ActAtanLo[32*i +: 32]), t)) |
          {x[31], 31'd0};
    end
    act_arctan = r;
  endfunction

  // mish = x n / (n + 2), n = e (e + 2), e = exp(x); x above 44: x.
  function automatic logic [31:0] act_mish(logic [31:0] x);
    /* verilator no_inline_task */
    logic [31:0] e, n;
    if (f32_is_nan(x[30:0])) begin
      act_mish = F32CanonNan;
    end else if (f32_lt(ActMishBig, x)) begin
      act_mish = x;
    end else begin
      e = act_exp(x);
      n = f32_mul(e, f32_add(e, F32Two));
      act_mish = f32_mul(x, f32_div(n, f32_add(n, F32Two)));
    end
  endfunction

  // The derivatives: silu_dx = sigmoid(x) (1 + x sigmoid(-x)); erf_dx = (exp(-h h) 2/sqrt(pi))
  // exp(-(a - h)(a + h)), +0 from 10.5; gelu_dx = Phi(x) + x (exp(-qh) / sqrt(2 pi)) exp(-ql) with
  // Phi and x^2 / 2 = qh + ql as in gelu.
  function automatic logic [31:0] f32_neg(logic [31:0] x);
    f32_neg = {~x[31], x[30:0]};
  endfunction
  function automatic logic [31:0] act_silu_dx(logic [31:0] x);
    /* verilator no_inline_task */
    if (f32_is_nan(x[30:0])) act_silu_dx = F32CanonNan;
    else act_silu_dx = f32_mul(act_sigmoid(x), f32_add(F32One, f32_mul(x, act_sigmoid(f32_neg(x)))));
  endfunction
  function automatic logic [31:0] act_erf_dx(logic [30:0] xm);  // even: |x| only
    /* verilator no_inline_task */
    logic [31:0] a, h;
    a = {1'b0, xm};
    if (f32_is_nan(xm)) begin
      act_erf_dx = F32CanonNan;
    end else if (!f32_lt(a, ActErfcZero)) begin
      act_erf_dx = 32'd0;
    end else begin
      h = {a[31:12], 12'd0};
      act_erf_dx = f32_mul(f32_mul(act_exp(f32_neg(f32_mul(h, h))), Act2SqrtPi),
                           act_exp(f32_neg(f32_mul(f32_sub(a, h), f32_add(a, h)))));
    end
  endfunction
  function automatic logic [31:0] act_gelu_dx(logic [31:0] x);
    logic [31:0] h, qh, ql, e, phi, cdf;
    if (f32_is_nan(x[30:0])) begin
      act_gelu_dx = F32CanonNan;
    end else begin
      h = {x[31:12], 12'd0};
      qh = f32_mul(F32Half, f32_mul(h, h));
      ql = f32_mul(F32Half, f32_mul(f32_sub(x, h), f32_add(x, h)));
      e = act_erfc_pos(f32_mul({1'b0, x[30:0]}, ActInvSqrt2), qh, ql);
      phi = f32_mul(f32_mul(act_exp(f32_neg(qh)), ActInvSqrt2Pi), act_exp(f32_neg(ql)));
      cdf = x[31] ? f32_mul(F32Half, e) : f32_sub(F32One, f32_mul(F32Half, e));
      act_gelu_dx = f32_add(cdf, f32_mul(x, phi));
    end
  endfunction

  ///////////////////////////////////////
  // ALU power, mod, fmod              //
  ///////////////////////////////////////

  // fmod(a, b), exact: the remainder of the significands, d = ea - eb doublings taken 32 at a time
  // (d <= 276), in b's units; the sign of a. NaN, an infinite a or a zero b: NaN; an infinite b or
  // |a| < |b|: a.
  function automatic logic [31:0] f32_fmod(logic [31:0] a, logic [30:0] b);  // |b| only
    /* verilator no_inline_task */
    logic [23:0] ma, mb;
    logic [63:0] r;
    int ea, eb, d, s;
    if (f32_is_nan(a[30:0]) || f32_is_nan(b) || a[30:0] == F32InfMag || b == 31'd0) begin
      f32_fmod = F32CanonNan;
    end else if (b == F32InfMag || a[30:0] < b) begin
      f32_fmod = a;
    end else begin
      ma = f32_norm_sig(a[30:0], ea);
      mb = f32_norm_sig(b, eb);
      d = ea - eb;
      r = {40'd0, ma} % {40'd0, mb};
      for (int i = 0; i < 9; i++) begin
        if (d > 0) begin
          s = (d > 32) ? 32 : d;
          r = (r << s) % {40'd0, mb};
          d = d - s;
        end
      end
      if (r == 64'd0) f32_fmod = {a[31], 31'd0};
      else            f32_fmod = f32_round(a[31], eb + 40, r, 1'b0);
    end
  endfunction

  // NumPy's mod: m = fmod(a, b); a zero m takes b's sign; m and b of different signs: m + b.
  function automatic logic [31:0] f32_mod(logic [31:0] a, logic [31:0] b);
    /* verilator no_inline_task */
    logic [31:0] m;
    m = f32_fmod(a, b[30:0]);
    if (f32_is_nan(m[30:0])) f32_mod = F32CanonNan;
    else if (m[30:0] == 31'd0) f32_mod = {b[31], 31'd0};
    else if (b[31] != m[31]) f32_mod = f32_add(m, b);
    else f32_mod = m;
  endfunction

  // power (act_math.hpp, pow_pos and power): 2^(b log2 a) for a > 0 in fixed point, the C99 pow
  // special values around it.
  localparam logic [63:0] PowOne = 64'h4000_0000_0000_0000;     // 1, Q.62

  // Leading zeros of a 128-bit word; 128 for zero.
  function automatic int fp_clz128(logic [127:0] x);
    fp_clz128 = (x[127:64] != 64'd0) ? $signed({25'd0, fp_clz64(x[127:64])}) : 64 + $signed({25'd0, fp_clz64(x[63:0])});
  endfunction

  // a^b for a = |a| > 0 finite (bits 30:0), b finite and nonzero.
  function automatic logic [31:0] f32_pow_pos(logic [30:0] a, logic [31:0] b);
    logic [23:0] ma, mb;
    logic [63:0] m, num, t, s, h, g, l, v, ex;
    logic [127:0] y0, p, ym, y;
    logic tneg, yneg;
    logic signed [63:0] n;
    int ea, eb, k, sh;
    if (a == F32One[30:0]) begin
      f32_pow_pos = F32One;
    end else begin
      ma = f32_norm_sig(a, ea);
      mb = f32_norm_sig(b[30:0], eb);
      k = ea - 127;
      m = {1'b0, ma, 39'd0};
      if (ma > 24'hB5_04F3) begin
        m = m >> 1;
        k = k + 1;
      end
      tneg = m < PowOne;
      num = tneg ? PowOne - m : m - PowOne;
      t = 64'({num, 64'd0} / {64'd0, m + PowOne});
      s = 64'(({64'd0, t} * {64'd0, t}) >> 64);
      h = ActPowLogC[64*12 +: 64];
      for (int j = 11; j >= 0; j--) h = ActPowLogC[64*j +: 64] + 64'(({64'd0, h} * {64'd0, s}) >> 64);
      g = 64'(({64'd0, t} * {64'd0, h}) >> 63);
      l = 64'(({64'd0, g} * {64'd0, ActPowK}) >> 62);
      y0 = {64'(k), 64'd0};
      y0 = tneg ? y0 - {64'd0, l} : y0 + {64'd0, l};
      yneg = y0[127] ^ b[31];
      p = (y0[127] ? 128'd0 - y0 : y0) * {104'd0, mb};
      sh = eb - 150;
      if (127 - fp_clz128(p) + sh - 64 >= 8) begin
        f32_pow_pos = yneg ? 32'd0 : {1'b0, F32InfMag};
      end else begin
        ym = (sh >= 0) ? p << sh : (sh <= -127) ? 128'd0 : p >> (-sh);
        y = yneg ? 128'd0 - ym : ym;
        n = $signed(y[127:64]);
        if (n >= 64'sd128) begin
          f32_pow_pos = {1'b0, F32InfMag};
        end else if (n < -64'sd151) begin
          f32_pow_pos = 32'd0;
        end else begin
          v = 64'(({64'd0, y[63:0]} * {64'd0, ActPowLn2}) >> 64);
          ex = ActPowExpD[64*19 +: 64];
          for (int j = 18; j >= 0; j--) ex = ActPowExpD[64*j +: 64] + 64'(({64'd0, ex} * {64'd0, v}) >> 64);
          f32_pow_pos = f32_round(1'b0, $signed(n[31:0]) + 128, ex, 1'b0);
        end
      end
    end
  endfunction

  // b (finite) an integer; an odd one (|b| < 2^24).
  function automatic logic f32_is_int(logic [31:0] b);
    f32_is_int = act_trunc(b) == b;
  endfunction
  function automatic logic f32_is_odd_int(logic [31:0] b);
    logic [23:0] sig;
    sig = {1'b1, b[22:0]};
    if (b[30:23] >= 8'd151 || b[30:23] < 8'd127) f32_is_odd_int = 1'b0;
    else f32_is_odd_int = f32_is_int(b) && sig[5'(8'd150 - b[30:23])];
  endfunction

  function automatic logic [31:0] f32_pow(logic [31:0] a, logic [31:0] b);
    logic odd;
    logic [30:0] r;
    odd = 1'b0;
    r = 31'd0;
    if (b[30:0] == 31'd0 || a == F32One) begin  // x^0 = 1 and 1^y = 1, NaN included
      f32_pow = F32One;
    end else if (f32_is_nan(a[30:0]) || f32_is_nan(b[30:0])) begin
      f32_pow = F32CanonNan;
    end else if (b[30:0] == F32InfMag) begin
      if (a[30:0] == F32One[30:0]) f32_pow = F32One;
      else f32_pow = ((a[30:0] > F32One[30:0]) != b[31]) ? {1'b0, F32InfMag} : 32'd0;
    end else begin
      odd = f32_is_odd_int(b);
      if (a[30:0] == 31'd0 || a[30:0] == F32InfMag) begin
        r = ((a[30:0] == F32InfMag) != b[31]) ? F32InfMag : 31'd0;
        f32_pow = {a[31] & odd, r};
      end else if (a[31] && !f32_is_int(b)) begin
        f32_pow = F32CanonNan;
      end else begin
        r = 31'(f32_pow_pos(a[30:0], b));  // positive
        f32_pow = {a[31] & odd, r};
      end
    end
  endfunction

  // The scalar engine's function f(x) on fp32 bits; codes outside the enumeration (and copy):
  // the identity. Only the selected function is computed.
  function automatic logic [31:0] fp_act(act_func_e fn, logic [31:0] x);
    logic [31:0] r;
    logic nan;
    nan = f32_is_nan(x[30:0]);
    unique case (fn)
      ACT_FUNC_RELU: r = f32_max(x, 32'd0);
      ACT_FUNC_EXP: r = act_exp(x);
      ACT_FUNC_LOG: r = act_log(x);
      ACT_FUNC_TANH: r = act_tanh(x);
      ACT_FUNC_SIGMOID: r = act_sigmoid(x);
      ACT_FUNC_SQRT: r = f32_sqrt(x);
      ACT_FUNC_RSQRT: r = f32_div(F32One, f32_sqrt(x));
      ACT_FUNC_RECIPROCAL: r = f32_div(F32One, x);
      ACT_FUNC_SQUARE: r = f32_mul(x, x);
      ACT_FUNC_ABS: r = nan ? F32CanonNan : {1'b0, x[30:0]};
      ACT_FUNC_NEGATIVE: r = nan ? F32CanonNan : {~x[31], x[30:0]};
      ACT_FUNC_SIGN: r = nan ? F32CanonNan : (x[30:0] == 31'd0) ? 32'd0 : {x[31], F32One[30:0]};
      ACT_FUNC_GELU_APPRX_TANH:
        r = f32_mul(x, act_sigmoid(f32_mul(x, f32_add(ActG0, f32_mul(ActG1, f32_mul(x, x))))));
      ACT_FUNC_SILU: r = f32_mul(x, act_sigmoid(x));
      ACT_FUNC_SOFTPLUS: r = act_softplus(x);
      ACT_FUNC_GELU: r = act_gelu(x);
      ACT_FUNC_ERF: r = act_erf(x);
      ACT_FUNC_SIN: r = act_trig(2'd0, x);
      ACT_FUNC_COS: r = act_trig(2'd1, x);
      ACT_FUNC_TAN: r = act_trig(2'd2, x);
      ACT_FUNC_ARCTAN: r = act_arctan(x);
      ACT_FUNC_MISH: r = act_mish(x);
      ACT_FUNC_GELU_DX: r = act_gelu_dx(x);
      ACT_FUNC_GELU_APPRX_SIGMOID: r = f32_mul(x, act_sigmoid(f32_mul(ActGeluSig, x)));
      ACT_FUNC_SILU_DX: r = act_silu_dx(x);
      ACT_FUNC_ERF_DX: r = act_erf_dx(x[30:0]);
      ACT_FUNC_CEIL: r = act_floor_ceil(x, 1'b1);
      ACT_FUNC_FLOOR: r = act_floor_ceil(x, 1'b0);
      ACT_FUNC_TRUNC: r = act_trunc(x);
      default: r = x;
    endcase
    fp_act = r;
  endfunction

  // The engines' ALU: `a op b` on fp32 bits. bypass passes a unchanged; subtract is add with b's
  // sign flipped (NaN results stay canonical); the comparisons give 1.0 or 0.0 (a NaN operand:
  // not_equal 1.0, the others 0.0); power, mod and fmod as below; the logical ops take any nonzero
  // (NaN too) as true and give 1.0 or 0.0. Codes outside the enumeration act as bypass.
  function automatic logic [31:0] fp_alu(alu_op_e op, logic [31:0] a, logic [31:0] b);
    logic [31:0] r;
    logic unord;
    unord = f32_is_nan(a[30:0]) || f32_is_nan(b[30:0]);
    unique case (op)
      ALU_ADD: r = f32_add(a, b);
      ALU_SUBTRACT: r = f32_sub(a, b);
      ALU_MULTIPLY: r = f32_mul(a, b);
      ALU_MAX: r = f32_max(a, b);
      ALU_MIN: r = f32_min(a, b);
      ALU_DIVIDE: r = f32_div(a, b);
      ALU_EQUAL: r = f32_truth(!unord && f32_eq(a, b));
      ALU_NOT_EQUAL: r = f32_truth(unord || !f32_eq(a, b));
      ALU_GREATER: r = f32_truth(!unord && f32_lt(b, a));
      ALU_GREATER_EQUAL: r = f32_truth(!unord && !f32_lt(a, b));
      ALU_LESS: r = f32_truth(!unord && f32_lt(a, b));
      ALU_LESS_EQUAL: r = f32_truth(!unord && !f32_lt(b, a));
      ALU_POWER: r = f32_pow(a, b);
      ALU_MOD: r = f32_mod(a, b);
      ALU_FMOD: r = f32_fmod(a, b[30:0]);
      ALU_LOGICAL_AND: r = f32_truth(a[30:0] != 31'd0 && b[30:0] != 31'd0);  // NaN is nonzero
      ALU_LOGICAL_OR: r = f32_truth(a[30:0] != 31'd0 || b[30:0] != 31'd0);
      ALU_LOGICAL_XOR: r = f32_truth((a[30:0] != 31'd0) != (b[30:0] != 31'd0));
      ALU_LOGICAL_NOT: r = f32_truth(a[30:0] == 31'd0);
      // bitvec: a and b are elements' bits (zero-extended), not fp32 (alu_is_bitvec)
      ALU_BITWISE_AND: r = a & b;
      ALU_BITWISE_OR: r = a | b;
      ALU_BITWISE_XOR: r = a ^ b;
      ALU_INVERT: r = ~a;
      ALU_LEFT_SHIFT: r = (b >= 32'd32) ? 32'd0 : a << b[4:0];
      ALU_RIGHT_SHIFT: r = (b >= 32'd32) ? 32'd0 : a >> b[4:0];
      default: r = a;
    endcase
    fp_alu = r;
  endfunction

  // The bitvec ops: their operands are the elements' bits, zero-extended to 32 (no conversion to
  // fp32), and their result is written as bits, cut to the destination's width.
  function automatic logic alu_is_bitvec(alu_op_e op);
    alu_is_bitvec = op == ALU_BITWISE_AND || op == ALU_BITWISE_OR || op == ALU_BITWISE_XOR || op == ALU_INVERT ||
                    op == ALU_LEFT_SHIFT || op == ALU_RIGHT_SHIFT;
  endfunction

  // Bits of an element of dtype dt (1, 2 or 4 bytes) kept from a 32-bit value.
  function automatic logic [31:0] elem_bits(logic [31:0] v, dtype_e dt);
    unique case (dtype_bytes(dt))
      3'd1:    elem_bits = {24'd0, v[7:0]};
      3'd2:    elem_bits = {16'd0, v[15:0]};
      default: elem_bits = v;
    endcase
  endfunction

  //////////////////////////////////////////
  // Tensor-engine PE arithmetic          //
  //////////////////////////////////////////

  // An fp32 operand of the PE array, unpacked once (a weight when it is loaded, a moving value at
  // the array's edge), so that every multiply-add starts from sign, exponent and a normalised
  // significand:
  //   cls   PE_ZERO, PE_FIN (finite, nonzero), PE_INF, PE_NAN
  //   e     exponent of the significand's LSB plus 172: value = m * 2^(e - 172), e in 0..276
  //   m     24-bit significand with its leading one at bit 23 (fp32 subnormals normalised)
  typedef enum logic [1:0] {PE_ZERO = 2'd0, PE_FIN = 2'd1, PE_INF = 2'd2, PE_NAN = 2'd3} pe_cls_e;
  typedef struct packed {
    pe_cls_e     cls;
    logic        sign;
    logic [8:0]  e;
    logic [23:0] m;
  } pe_op_t;

  // fp32 bits to a PE operand.
  // (Here and in pe_fma the fields are variables of their own, packed into or out of the struct
  // whole: Yosys 0.23 reads no member of a struct that is a function's argument or variable.)
  function automatic pe_op_t pe_unpack(logic [31:0] f);
    pe_cls_e     cls;
    logic [8:0]  e;
    logic [23:0] m;
    logic [5:0]  lz;
    cls = PE_FIN;
    e   = {1'b0, f[30:23]} + 9'd22;
    m   = {1'b1, f[22:0]};
    if (f[30:23] == 8'hFF) begin
      cls = (f[22:0] != 23'd0) ? PE_NAN : PE_INF;
      e   = '0;
      m   = '0;
    end else if (f[30:23] == 8'd0) begin
      if (f[22:0] == 23'd0) begin
        cls = PE_ZERO;
        e   = '0;
        m   = '0;
      end else begin
        // f * 2^-149 with the leading one of the 23-bit field at bit 22 - lz
        lz = fp_clz32({f[22:0], 9'd0});
        e  = 9'd22 - {3'd0, lz};
        m  = {f[22:0], 1'b0} << lz;
      end
    end
    pe_unpack = {cls, f[31], e, m};
  endfunction

  // The special cases of pe_fma: an operand is zero, infinite or NaN, or the accumulator is
  // infinite or NaN. psgn holds the product's sign at bit 31. (Flags are whole words here and in
  // pe_fma: byte-sized flags that the C++ compiler spills and reloads as words stall the
  // simulation.)
  function automatic logic [31:0] pe_fma_special(pe_cls_e wc, pe_cls_e xc, logic [31:0] psgn, logic [31:0] acc);
    if (wc == PE_NAN || xc == PE_NAN || f32_is_nan(acc[30:0])) begin
      pe_fma_special = F32CanonNan;
    end else if (wc == PE_INF || xc == PE_INF) begin
      if (wc == PE_ZERO || xc == PE_ZERO || (acc[30:0] == F32InfMag && acc[31] != psgn[31])) pe_fma_special = F32CanonNan;
      else pe_fma_special = psgn | {1'b0, F32InfMag};
    end else begin
      // The product is an exact zero: acc unchanged, but -0 only if both are -0.
      pe_fma_special = (acc[30:0] == 31'd0) ? (acc & psgn) : acc;
    end
  endfunction

  // acc + w * x with the product exact and one rounding to nearest even (a fused multiply-add),
  // IEEE subnormals kept, any NaN result canonical: one step of a PE column's sum.
  //
  // Both addends go into one 64-bit window: the one whose top bit can be higher at the top (the
  // 48-bit product at [61:14], the 24-bit accumulator at [61:38]), the other at the same place
  // and then shifted right by the exponent distance, the bits that fall off leaving a sticky
  // bit. Bit 63 is then the sign of the difference and bit 62 takes a carry. A sticky bit only
  // arises when the addends are so far apart that at most one bit cancels, so it stays below the
  // rounding bit. t is the biased exponent, minus one, of a sum normalised to bit 62; the
  // normalising shift stops at t, where the result becomes subnormal. Written for simulation
  // speed (it runs once per PE per cycle): 32-bit exponents, one variable right shift for
  // alignment, no branch on the signs, and a leading-zero count only after a cancellation.
  function automatic logic [31:0] pe_fma(pe_op_t w, pe_op_t x, logic [31:0] acc);
    logic [63:0] mp, ma, xt, yt, y, s, d, mag, subm, negm;
    logic [62:0] n;
    logic [31:0] psgn, sgn, up;
    int          tp, ea1, dp, a, t, lz, sh;
    pe_cls_e     wc, xc;
    logic        ws, xs;
    logic [8:0]  we, xe;
    logic [23:0] wm, xm;
    {wc, ws, we, wm} = w;
    {xc, xs, xe, xm} = x;
    psgn = {ws ^ xs, 31'd0};
    if (wc != PE_FIN || xc != PE_FIN || acc[30:23] == 8'hFF) begin
      pe_fma = pe_fma_special(wc, xc, psgn, acc);
    end else begin
      ea1  = (acc[30:23] == 8'd0) ? 1 : $signed({24'd0, acc[30:23]});
      ma   = {40'd0, acc[30:23] != 8'd0, acc[22:0]};
      mp   = {40'd0, wm} * {40'd0, xm};
      tp   = $signed({23'd0, we}) + $signed({23'd0, xe}) - 170;
      dp   = tp - ea1;
      // Which addend is on top, and how far below it the other one starts.
      if (dp >= 0) begin
        xt  = mp << 14;
        yt  = ma << 38;
        a   = dp;
        t   = tp;
        sgn = psgn;
      end else begin
        xt  = ma << 38;
        yt  = mp << 14;
        a   = -dp;
        t   = ea1;
        sgn = {acc[31], 31'd0};
      end
      if (a > 63) a = 63;
      y    = (yt >> a) | {63'd0, (yt << (64 - a)) != 64'd0};
      // xt + y or xt - y, then the magnitude and the sign of the result, without branches.
      subm = 64'd0 - {63'd0, psgn[31] ^ acc[31]};
      s    = xt + ((y ^ subm) - subm);
      negm = 64'd0 - {63'd0, s[63]};
      d    = (s ^ negm) - negm;
      sgn  = sgn ^ {s[63], 31'd0};
      if (d == 64'd0) begin
        pe_fma = 32'd0;
      end else begin
        // (An if, not ?: - Verilator would count the leading zeros every time.)
        if (d[62:60] != 3'd0) lz = 3 - $signed({31'd0, d[62]}) - $signed({31'd0, d[62] | d[61]});
        else                  lz = $signed({25'd0, fp_clz64(d)});
        sh   = (lz - 1 < t) ? lz - 1 : t;
        n    = d[62:0] << sh;
        up   = {31'd0, n[38] & ((n[37:0] != 38'd0) | n[39])};
        mag  = {9'd0, 32'(t - sh), 23'd0} + {40'd0, n[62:39]} + {32'd0, up};
        pe_fma = (mag >= 64'(F32InfMag)) ? (sgn | {1'b0, F32InfMag}) : (sgn | {1'b0, mag[30:0]});
      end
    end
  endfunction

endpackage
