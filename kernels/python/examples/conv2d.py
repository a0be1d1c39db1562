"""fused_conv2d_maxpool (handout 003, part 2) in NKI Python, the twin of kernels/src/conv.cpp:
out = maxpool(conv2d(X, W) + bias, pool_size), stride 1, no padding, nothing intermediate in HBM.

The convolution is the sum of K x K shifted matmuls. The weights are transposed once on the
tensor engine (input channels onto the partitions); the image streams through the SBUF in bands
of rows; each group of R output rows accumulates Cin/128 x K x K matmuls in one PSUM bank, whose
moving operand is read in place from the band as a 2-D view; the bias is added (and the result
pooled) on the way out of PSUM. See conv.cpp for the diagram."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from sizes import conv_plan


@nki.compiler.skip_middle_end_transformations
@nki.jit
def fused_conv2d_maxpool(X, W, bias, pool_size=1):
    dtype = X.dtype
    c = conv_plan(X.shape, W.shape, bias.shape[0], pool_size, 4 if dtype == nl.float32 else 2)
    B, Cout, K, Ho, Wo, Wout, CT, CO_T, KK = c.B, c.Cout, c.K, c.Ho, c.Wo, c.Wout, c.CT, c.CO_T, c.KK
    Cin, Wd, R, BR, NBANDS, Hout = c.Cin, c.Wd, c.R, c.BR, c.NBANDS, c.Hout
    P = nl.tile_size.pmax  # 128
    BANK = nl.tile_size.psum_fmax  # 512 fp32: one PSUM bank per partition

    out = nl.ndarray((B, Cout, Ho, Wo), dtype=dtype, buffer=nl.shared_hbm)

    # --- weights: W[co, ci, i, j] -> w_T[ct][ci, ((cot * K + i) * K + j) * 128 + co]
    w_T = nl.ndarray((CT, nl.par_dim(P), CO_T * KK * P), dtype=dtype, buffer=nl.sbuf)
    x_bufs = nl.ndarray((2, CT, nl.par_dim(P), (BR + K - 1) * Wd), dtype=dtype, buffer=nl.sbuf)
    o_bufs = nl.ndarray((2, nl.par_dim(P), BR // pool_size * Wo), dtype=dtype, buffer=nl.sbuf)
    bias_sb = nl.ndarray((CO_T, nl.par_dim(P), 1), dtype=dtype, buffer=nl.sbuf)
    bias_v = bias.reshape((CO_T, P, 1))
    PER_BANK = BANK // P
    NB = (KK + PER_BANK - 1) // PER_BANK
    for cot in nl.affine_range(CO_T):
        nisa.dma_copy(dst=bias_sb[cot], src=bias_v[cot])
        w_nat = nl.ndarray((P, Cin * KK), dtype=dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=w_nat, src=W[cot * P:(cot + 1) * P])
        w_view = w_nat.reshape((P, Cin, KK))  # [co, ci, i*K + j]
        for ct in nl.affine_range(CT):
            w_ps = nl.ndarray((NB, nl.par_dim(P), BANK), dtype=nl.float32, buffer=nl.psum)
            for ij in range(KK):
                p0 = (ij % PER_BANK) * P
                w_ps[ij // PER_BANK][:, p0:p0 + P] = nisa.nc_transpose(w_view[:, ct * P:(ct + 1) * P, ij])
            for b in range(NB):
                w = min(BANK, (KK - b * PER_BANK) * P)
                c0 = (cot * KK + b * PER_BANK) * P
                w_T[ct][:, c0:c0 + w] = nisa.tensor_copy(w_ps[b][:, 0:w])

    # --- the layer. Each loop body is the same in every iteration, as NKI traces it once: the
    # double buffers are picked from the loop indices (the bands in the order they are loaded),
    # and the last band, when it has fewer rows, is traced after the loop over the full ones.
    def band_rows(b, band, br):
        r0 = band * BR
        x_band = x_bufs[(b * NBANDS + band) % 2]
        for ct in range(CT):
            x_band[ct][:, 0:(br + K - 1) * Wd] = nl.load(X[b][ct * P:(ct + 1) * P, r0:r0 + br + K - 1, :])
        for cot in nl.affine_range(CO_T):
            out_band = o_bufs[((b * NBANDS + band) * CO_T + cot) % 2]
            for g in nl.affine_range((br + R - 1) // R):
                rg = min(R, br - g * R)  # rows in this group
                ps = nl.ndarray((P, R * Wout), dtype=nl.float32, buffer=nl.psum)
                acc = ps[:, 0:rg * Wout]
                n = 0
                for ct in range(CT):
                    rows = x_band[ct].reshape((P, BR + K - 1, Wd))
                    for i in range(K):
                        for j in range(K):
                            c0 = ((cot * K + i) * K + j) * P
                            mm = nisa.nc_matmul(w_T[ct][:, c0:c0 + P],
                                                rows[:, g * R + i:g * R + i + rg, j:j + Wout])
                            if n == 0:
                                acc[...] = mm
                            else:
                                acc += mm
                            n += 1
                dst = out_band[:, g * R // pool_size * Wo:(g * R + rg) // pool_size * Wo]
                if pool_size == 1:
                    dst[...] = nisa.activation(nl.copy, acc, bias=bias_sb[cot])
                else:
                    y = nl.ndarray((P, R * Wout), dtype=dtype, buffer=nl.sbuf)
                    yv = y[:, 0:rg * Wout]
                    yv[...] = nisa.activation(nl.copy, acc, bias=bias_sb[cot])
                    # max over each window's columns, then over its rows
                    cols = nl.ndarray((P, R * Wo), dtype=dtype, buffer=nl.sbuf)
                    cv = cols[:, 0:rg * Wo]
                    cv[...] = nisa.tensor_reduce(nl.max, yv.reshape((P, rg * Wo, pool_size)), axis=2)
                    win = cv.reshape((P, rg // pool_size, pool_size, Wo))
                    d = dst.reshape((P, rg // pool_size, Wo))
                    d[...] = nisa.tensor_tensor(win[:, :, 0], win[:, :, 1], op=nl.maximum)
                    for q in range(2, pool_size):
                        d[...] = nisa.tensor_tensor(d, win[:, :, q], op=nl.maximum)
            nisa.dma_copy(dst=out[b, cot * P:(cot + 1) * P, r0 // pool_size:(r0 + br) // pool_size],
                          src=out_band[:, 0:br // pool_size * Wo])

    FULL, LAST = Hout // BR, Hout % BR
    for b in nl.affine_range(B):
        for band in nl.affine_range(FULL):
            band_rows(b, band, BR)
        if LAST:
            band_rows(b, FULL, LAST)
    return out
