"""fused_conv2d_maxpool (handout 003, part 2) in today's NKI, the twin of ../conv2d.py and of
kernels/src/conv.cpp: out = maxpool(conv2d(X, W) + bias, pool_size), stride 1, no padding,
nothing intermediate in HBM (see conv.cpp for the diagram).

The weights are transposed once on the tensor engine (input channels onto the partitions); the
image streams through the SBUF in bands of rows; each group of R output rows accumulates
Cin/128 x K x K matmuls in one PSUM bank, whose moving operand is read in place from the band;
the bias is added (and the result pooled) on the way out of PSUM."""
import nki
import nki.isa as nisa
import nki.language as nl

from sizes import conv_plan

from .kernels import _itemsize


@nki.jit
def fused_conv2d_maxpool(X, W, bias, pool_size=1):
    dtype = X.dtype
    c = conv_plan(X.shape, W.shape, bias.shape[0], pool_size, _itemsize(dtype))
    B, Cout, K, Ho, Wo, Wout, CT, CO_T, KK = c.B, c.Cout, c.K, c.Ho, c.Wo, c.Wout, c.CT, c.CO_T, c.KK
    Cin, Wd, R, BR, NBANDS, Hout = c.Cin, c.Wd, c.R, c.BR, c.NBANDS, c.Hout
    P = nl.tile_size.pmax  # 128
    BANK = nl.tile_size.psum_bank_fmax  # 512 fp32: one PSUM bank per partition

    out = nl.ndarray((B, Cout, Ho, Wo), dtype=dtype, buffer=nl.shared_hbm)

    # --- weights: W[co, ci, i, j] -> w_T[ct][ci, ((cot * K + i) * K + j) * 128 + co]
    w_T = [nl.ndarray((P, CO_T * KK * P), dtype=dtype, buffer=nl.sbuf) for _ in range(CT)]
    # Two buffers of an input band (CT tiles of 128 channels, BR + K - 1 rows each) and of an output
    # band, placed now, beside the weights' staging tiles, so that the first band loads while they
    # are transposed; and the bias, a column per 128 output channels. The buffers are free
    # dimensions of one tile each, side by side as the twins' block tensors (tiles of their own
    # would each start at a 64-byte boundary).
    x_bufs = nl.ndarray((P, 2, CT, BR + K - 1, Wd), dtype=dtype, buffer=nl.sbuf)
    o_bufs = nl.ndarray((P, 2, BR // pool_size * Wo), dtype=dtype, buffer=nl.sbuf)
    bias_sb = nl.ndarray((P, CO_T), dtype=dtype, buffer=nl.sbuf)
    bias_v = bias.reshape((CO_T, P, 1))
    PER_BANK = BANK // P
    NB = (KK + PER_BANK - 1) // PER_BANK
    for cot in nl.affine_range(CO_T):
        nisa.dma_copy(dst=bias_sb[:, cot:cot + 1], src=bias_v[cot])
        w_nat = nl.ndarray((P, Cin * KK), dtype=dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=w_nat, src=W[cot * P:(cot + 1) * P])
        w_view = w_nat.reshape((P, Cin, KK))  # [co, ci, i*K + j]
        for ct in nl.affine_range(CT):
            w_ps = [nl.ndarray((P, BANK), dtype=nl.float32, buffer=nl.psum) for _ in range(NB)]
            for ij in range(KK):
                p0 = (ij % PER_BANK) * P
                nisa.nc_transpose(dst=w_ps[ij // PER_BANK][:, p0:p0 + P], data=w_view[:, ct * P:(ct + 1) * P, ij])
            for b in range(NB):
                w = min(BANK, (KK - b * PER_BANK) * P)
                c0 = (cot * KK + b * PER_BANK) * P
                nisa.tensor_copy(dst=w_T[ct][:, c0:c0 + w], src=w_ps[b][:, 0:w])

    # --- the layer: the double buffers are picked from the loop indices (the bands in the order
    # they are loaded); the last band may have fewer rows, its last row group too.
    for b in nl.affine_range(B):
        for band in nl.affine_range(NBANDS):
            r0 = band * BR
            br = min(BR, Hout - r0)
            x_band = (b * NBANDS + band) % 2
            for ct in range(CT):
                nisa.dma_copy(dst=x_bufs[:, x_band, ct, 0:br + K - 1, :],
                              src=X[b, ct * P:(ct + 1) * P, r0:r0 + br + K - 1, :])
            for cot in nl.affine_range(CO_T):
                out_band = o_bufs[:, ((b * NBANDS + band) * CO_T + cot) % 2, :]
                for g in nl.affine_range((br + R - 1) // R):
                    rg = min(R, br - g * R)  # rows in this group
                    ps = nl.ndarray((P, R * Wout), dtype=nl.float32, buffer=nl.psum)
                    acc = ps[:, 0:rg * Wout]
                    # Cin/128 x K x K multiplies into one PSUM bank: the first overwrites, the others add
                    for ct in range(CT):
                        for i in range(K):
                            for j in range(K):
                                c0 = ((cot * K + i) * K + j) * P
                                nisa.nc_matmul(dst=acc, stationary=w_T[ct][:, c0:c0 + P],
                                               moving=x_bufs[:, x_band, ct, g * R + i:g * R + i + rg, j:j + Wout])
                    dst = out_band[:, g * R // pool_size * Wo:(g * R + rg) // pool_size * Wo]
                    _bias_and_pool(dst, acc, bias_sb[:, cot:cot + 1], rg, pool_size, R, Wout, Wo, dtype)
                nisa.dma_copy(dst=out[b, cot * P:(cot + 1) * P, r0 // pool_size:(r0 + br) // pool_size],
                              src=out_band[:, 0:br // pool_size * Wo])
    return out


def _bias_and_pool(dst, acc, bias_tile, rg, pool_size, R, Wout, Wo, dtype):
    """The conv + bias of one row group (acc: rg rows in PSUM) into dst, pooled over pool_size x
    pool_size windows (a max over each window's columns, then over its rows) unless pool_size is 1."""
    P = acc.shape[0]
    if pool_size == 1:
        nisa.activation(dst=dst, op=nl.copy, data=acc, bias=bias_tile)
        return
    y = nl.ndarray((P, R * Wout), dtype=dtype, buffer=nl.sbuf)
    yv = y[:, 0:rg * Wout]
    nisa.activation(dst=yv, op=nl.copy, data=acc, bias=bias_tile)
    cols = nl.ndarray((P, R * Wo), dtype=dtype, buffer=nl.sbuf)
    cv = cols[:, 0:rg * Wo]
    nisa.tensor_reduce(dst=cv, op=nl.maximum, data=yv.reshape((P, rg * Wo, pool_size)), axis=2)
    win = cv.reshape((P, rg // pool_size, pool_size, Wo))
    d = dst.reshape((P, rg // pool_size, Wo))
    nisa.tensor_tensor(dst=d, data1=win[:, :, 0], data2=win[:, :, 1], op=nl.maximum)
    for q in range(2, pool_size):
        nisa.tensor_tensor(dst=d, data1=d, data2=win[:, :, q], op=nl.maximum)
