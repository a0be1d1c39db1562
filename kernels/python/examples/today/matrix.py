"""The handout's tensor-engine matmuls (part 2) in today's NKI: the twins of matrix.py's
matmul_tiled and matmul_blocked and of their C++ twins in kernels/src/matrix.cpp (the same
Program). nisa.nc_matmul writes into a PSUM tile: its default accumulate=None overwrites the
tile's first write and adds after it, so no zeroing is needed."""
import nki
import nki.isa as nisa
import nki.language as nl

from sizes import matmul_blocks

from .kernels import _itemsize


def _tiles():
    """The tensor engine's tile sizes: the stationary's free size (128), the partition size
    (128: the contraction per multiply), the moving's free size (512)."""
    return nl.tile_size.gemm_stationary_fmax, nl.tile_size.pmax, nl.tile_size.gemm_moving_fmax


@nki.jit
def matmul_tiled(lhsT, rhs):
    """result [M, N] = lhsT [K, M].T @ rhs [K, N], one 128 x 512 result tile at a time, both
    input tiles loaded for every multiply (the handout's nki_matmul_tiled_)."""
    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_, "lhsT and rhs must have the same contraction dimension"
    TILE_M, TILE_K, TILE_N = _tiles()
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            res_psum = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lhsT_tile = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_tile = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=lhsT_tile, src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                nisa.dma_copy(dst=rhs_tile, src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                # The first multiply overwrites the PSUM tile, the others add into it
                nisa.nc_matmul(dst=res_psum, stationary=lhsT_tile, moving=rhs_tile)

            # Out of PSUM into the SBUF, in the result's dtype, then to HBM
            res_sb = nl.ndarray((TILE_M, TILE_N), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res_sb, src=res_psum)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], src=res_sb)
    return result


@nki.jit
def matmul_blocked(lhsT, rhs):
    """lhsT.T @ rhs with each block of lhsT and of rhs moved from HBM once and used by every
    result tile of the block, the next block loading while this one multiplies."""
    TILE_M, TILE_K, TILE_N = _tiles()
    (K, M), (_, N) = lhsT.shape, rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    # Block sizes: two buffers of each block and of the output row within this share of a
    # partition's SBUF bytes.
    KT = K // TILE_K
    BM, BN = matmul_blocks(K, M, N, _itemsize(lhsT.dtype))

    # Two buffers of each block (KT tiles of 128 contraction rows) and of the output row, for
    # the whole kernel; the blocks use them in turn, in the order they are loaded.
    rhs_bufs = [[nl.ndarray((TILE_K, BN), dtype=rhs.dtype, buffer=nl.sbuf) for _ in range(KT)] for _ in range(2)]
    lhs_bufs = [[nl.ndarray((TILE_K, BM), dtype=lhsT.dtype, buffer=nl.sbuf) for _ in range(KT)] for _ in range(2)]
    out_bufs = [nl.ndarray((TILE_M, BN), dtype=result.dtype, buffer=nl.sbuf) for _ in range(2)]
    MB, MT = M // BM, BM // TILE_M

    for nb in nl.affine_range(N // BN):
        rhs_blk, cols = rhs_bufs[nb % 2], nl.ds(nb * BN, BN)
        for mb in nl.affine_range(MB):
            lhs_blk = lhs_bufs[(nb * MB + mb) % 2]
            # The first row block loads the column block's rhs rows too, interleaved with its own,
            # so that the multiplies over k = 0 can start after two loads rather than KT + 1.
            for k in range(KT):
                depth = nl.ds(k * TILE_K, TILE_K)
                if mb == 0:
                    nisa.dma_copy(dst=rhs_blk[k], src=rhs[depth, cols])
                nisa.dma_copy(dst=lhs_blk[k], src=lhsT[depth, nl.ds(mb * BM, BM)])
            for mt in nl.affine_range(MT):
                out_row = out_bufs[((nb * MB + mb) * MT + mt) % 2]
                for nt in nl.affine_range(BN // TILE_N):
                    res_psum = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.sequential_range(KT):
                        nisa.nc_matmul(dst=res_psum, stationary=lhs_blk[k][:, nl.ds(mt * TILE_M, TILE_M)],
                                       moving=rhs_blk[k][:, nl.ds(nt * TILE_N, TILE_N)])
                    nisa.tensor_copy(dst=out_row[:, nl.ds(nt * TILE_N, TILE_N)], src=res_psum)
                nisa.dma_copy(dst=result[nl.ds(mb * BM + mt * TILE_M, TILE_M), cols], src=out_row)
    return result
