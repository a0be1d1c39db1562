"""The handout's tensor-engine matmuls in NKI Python (part 2): the tiled matmul as the handout writes
it (nki_matmul_tiled_, writing its result argument), the same returning its result (matmul_tiled),
and matmul_blocked. The returning kernels have C++ twins in kernels/src/matrix.cpp that trace to
the same Program (matrix_transpose, part 1, is in kernels.py)."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from sizes import matmul_blocks


@nki.compiler.skip_middle_end_transformations
@nki.jit
def nki_matmul_tiled_(lhsT, rhs, result):
    """NKI kernel to compute a matrix multiplication operation in a tiled manner (handout 003)"""

    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_, "lhsT and rhs must have the same contraction dimension"

    # Maximum free dimension of the stationary operand of general matrix multiplication on tensor engine
    TILE_M = nl.tile_size.gemm_stationary_fmax  # 128

    # Maximum partition dimension of a tile
    TILE_K = nl.tile_size.pmax  # 128

    # Maximum free dimension of the moving operand of general matrix multiplication on tensor engine
    TILE_N = nl.tile_size.gemm_moving_fmax  # 512

    # Use affine_range to loop over tiles
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            # Allocate a tensor in PSUM
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)

            for k in nl.affine_range(K // TILE_K):
                # Declare the tiles on SBUF
                lhsT_tile = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_tile = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)

                # Load tiles from lhsT and rhs
                nisa.dma_copy(dst=lhsT_tile, src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                nisa.dma_copy(dst=rhs_tile, src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])

                # Accumulate partial-sums into PSUM
                res_psum += nisa.nc_matmul(lhsT_tile[...], rhs_tile[...])

            # Copy the result from PSUM back to SBUF, and cast to expected output data-type
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], src=res_sb)


@nki.jit
def matmul_tiled(lhsT, rhs):
    """nki_matmul_tiled_, returning its result (a kernel called from a kernel is traced inline)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    nki_matmul_tiled_(lhsT, rhs, result)
    return result


@nki.jit
def matmul_blocked(lhsT, rhs):
    """The same product with blocks of lhsT and rhs loaded once into the SBUF and reused by every
    tile of the block, the next block's loads overlapping this block's multiplies."""
    K, M = lhsT.shape
    _, N = rhs.shape
    TILE_M = nl.tile_size.gemm_stationary_fmax
    TILE_K = nl.tile_size.pmax
    TILE_N = nl.tile_size.gemm_moving_fmax
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    # Block sizes: two buffers of each block tile and of the output row within this share of a
    # partition's SBUF bytes.
    KT = K // TILE_K
    BM, BN = matmul_blocks(K, M, N, 4 if lhsT.dtype == nl.float32 else 2)

    rhs_bufs = nl.ndarray((2, KT, nl.par_dim(TILE_K), BN), dtype=rhs.dtype, buffer=nl.sbuf)
    lhs_bufs = nl.ndarray((2, KT, nl.par_dim(TILE_K), BM), dtype=lhsT.dtype, buffer=nl.sbuf)
    out_bufs = nl.ndarray((2, nl.par_dim(TILE_M), BN), dtype=result.dtype, buffer=nl.sbuf)
    # Double buffers picked from the loop indices (the blocks in the order they are loaded), so
    # that each loop body is the same in every iteration, as NKI traces it once.
    MB, MT = M // BM, BM // TILE_M

    def row_block(nb, mb, rhs_blk, load_rhs):
        lhs_blk = lhs_bufs[(nb * MB + mb) % 2]
        # The first row block loads the column block's rhs rows too, interleaved with its own, so
        # that the multiplies over k = 0 can start after two loads rather than KT + 1.
        for k in nl.affine_range(KT):
            if load_rhs:
                nisa.dma_copy(dst=rhs_blk[k], src=rhs[k * TILE_K:(k + 1) * TILE_K, nb * BN:(nb + 1) * BN])
            nisa.dma_copy(dst=lhs_blk[k], src=lhsT[k * TILE_K:(k + 1) * TILE_K, mb * BM:(mb + 1) * BM])
        for mt in nl.affine_range(MT):
            out_row = out_bufs[((nb * MB + mb) * MT + mt) % 2]
            for nt in nl.affine_range(BN // TILE_N):
                res_psum = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                # The first multiply into the new PSUM tile overwrites it, the others add.
                for k in nl.sequential_range(KT):
                    res_psum += nisa.nc_matmul(lhs_blk[k][:, mt * TILE_M:(mt + 1) * TILE_M],
                                               rhs_blk[k][:, nt * TILE_N:(nt + 1) * TILE_N])
                out_row[:, nt * TILE_N:(nt + 1) * TILE_N] = nisa.tensor_copy(res_psum)
            nisa.dma_copy(dst=result[mb * BM + mt * TILE_M:mb * BM + (mt + 1) * TILE_M, nb * BN:(nb + 1) * BN],
                          src=out_row)

    # The first row block of each column block is traced before the loop over the others (it
    # also loads the rhs block), so that each loop body is the same in every iteration.
    for nb in nl.affine_range(N // BN):
        rhs_blk = rhs_bufs[nb % 2]
        row_block(nb, 0, rhs_blk, True)
        for mb in nl.affine_range(1, MB):
            row_block(nb, mb, rhs_blk, False)
    return result
