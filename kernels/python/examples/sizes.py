"""The example kernels' tile, block and band sizes: plain Python, shared by the neuronxcc.nki
kernels here and their twins in today's NKI (today/), so that both compute the same sizes as the
C++ twins in kernels/src (the same Programs). Each check is an assert in the kernel's words."""
from types import SimpleNamespace

P = 128  # partitions: the tensor engine's contraction and stationary width (nl.tile_size.pmax)
BANK = 512  # float32 per partition in one PSUM bank (nl.tile_size.psum_bank_fmax)


def largest_divisor(n, cap):
    """The largest divisor of n that is at most cap."""
    for d in range(min(n, cap), 1, -1):
        if n % d == 0:
            return d
    return 1


def transpose_groups(M, N, esz):
    """matrix_transpose's groups of ROWS row blocks x COLS column blocks of a [M, N] matrix of
    esz-byte elements, about 4 KiB per partition each way (one DMA per input panel [128,
    COLS*128], one per output row tile [128, ROWS*128]): ROWS, COLS, the transposed blocks side
    by side in a PSUM bank (PER_BANK) and the banks of a block column (NBANKS), the groups per
    row of groups (GROUP_COLS) and in all (GROUPS)."""
    assert M % P == N % P == 0, "Matrix dimensions not divisible by tile dimension!"
    rows = largest_divisor(M // P, 8)
    cols = largest_divisor(N // P, 4096 // (P * esz))
    per_bank = BANK // P
    group_cols = N // (cols * P)
    return SimpleNamespace(ROWS=rows, COLS=cols, PER_BANK=per_bank, NBANKS=(rows + per_bank - 1) // per_bank,
                           GROUP_COLS=group_cols, GROUPS=(M // (rows * P)) * group_cols)


def matmul_blocks(K, M, N, esz, tile_n=512):
    """matmul_blocked's block sizes (BM rows of lhsT's columns, BN columns of rhs): the widest
    whose two buffers of each block ([K / 128] tiles of 128 contraction rows) and of the output
    row fit 160 KiB of a partition."""
    kt = K // P
    budget = 160 * 1024

    def nbytes(bm, bn):
        return 2 * (kt * (bm + bn) * esz + bn * esz)

    bn = tile_n * largest_divisor(N // tile_n, N // tile_n)
    while bn > tile_n and nbytes(P, bn) > budget:
        bn = tile_n * largest_divisor(N // tile_n, bn // tile_n - 1)
    bm = P * largest_divisor(M // P, M // P)
    while bm > P and nbytes(bm, bn) > budget:
        bm = P * largest_divisor(M // P, bm // P - 1)
    assert nbytes(bm, bn) <= budget, f"K = {K} is too large for matmul_blocked"
    return bm, bn


def conv_plan(x_shape, w_shape, n_bias, pool_size, esz):
    """fused_conv2d_maxpool's sizes for X [B, Cin, H, Wd], W [Cout, Cin, K, K] and a bias of
    n_bias elements, checked: the pooled output Ho x Wo and the conv outputs its windows cover
    (Hout x Wout: floor, as PyTorch's max_pool2d), the 128-channel tiles (CT in, CO_T out), the
    row group (R output rows in one PSUM bank) and the band (BR output rows per input load,
    NBANDS bands) within the SBUF budget."""
    B, Cin, H, Wd = x_shape
    Cout, Cin_, K, K_ = w_shape
    assert Cin_ == Cin, f"W has {Cin_} input channels but X has {Cin}"
    assert K_ == K, f"the filter must be square (Filter Height == Filter Width), got {K} x {K_}"
    assert n_bias == Cout, f"bias has {n_bias} elements but W has {Cout} output channels"
    assert Cin % P == 0, f"Input Channels ({Cin}) must be a multiple of {P}"
    assert Cout % P == 0, f"Output Channels ({Cout}) must be a multiple of {P}"
    Ho, Wo = (H - K + 1) // pool_size, (Wd - K + 1) // pool_size
    assert Ho >= 1 and Wo >= 1, \
        f"the output size {H - K + 1} x {Wd - K + 1} is smaller than the {pool_size} x {pool_size} pool window"
    Hout, Wout = Ho * pool_size, Wo * pool_size
    assert Wout <= BANK, f"output rows of {Wout} elements do not fit one PSUM bank ({BANK} float32)"
    CT, CO_T, KK = Cin // P, Cout // P, K * K

    # SBUF budget per partition: the transposed weights, their staging tiles, and two buffers of
    # an input band and of an output band.
    sbuf_bytes = 160 * 1024
    w_bytes = CT * CO_T * KK * P * esz
    w_stage_bytes = 2 * Cin * KK * esz
    assert w_bytes + w_stage_bytes <= sbuf_bytes // 2, f"the weights W {tuple(w_shape)} do not fit the SBUF"
    R = min(Hout, BANK // Wout // pool_size * pool_size)
    assert R >= pool_size, f"a pool window of {pool_size} rows of {Wout} elements does not fit one PSUM bank"

    def band_bytes(br):
        return 2 * (CT * (br + K - 1) * Wd * esz + br // pool_size * Wo * esz)

    BR = min(R * max(1, 16 // R), (Hout + R - 1) // R * R)
    while BR > R and w_bytes + w_stage_bytes + band_bytes(BR) > sbuf_bytes:
        BR -= R
    assert w_bytes + w_stage_bytes + band_bytes(BR) <= sbuf_bytes, "a band of the image and the weights do not fit"
    return SimpleNamespace(B=B, Cin=Cin, H=H, Wd=Wd, Cout=Cout, K=K, Ho=Ho, Wo=Wo, Hout=Hout, Wout=Wout, CT=CT,
                           CO_T=CO_T, KK=KK, R=R, BR=BR, NBANDS=(Hout + BR - 1) // BR)
