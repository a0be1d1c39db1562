"""NKI's tutorial kernels as today's NKI (0.3 to 0.7) documents them, written for this project
from what each tutorial says its kernel does (not the tutorials' own files):

- nki_tensor_add_kernel: the quickstart's tensor addition of two tiles of at most 128 x 512;
- nki_tensor_add_kernel_: the same over any multiple of 128 x 512, one tile pair at a time;
- getting_started_kernel: the high-level spelling, nl.load, nl.add, nl.store;
- tensor_transpose2D_kernel_: [P, F1 * F2] -> [P, F2 * F1], each partition's F1 x F2 matrix
  transposed in the free dimension, one column at a time (nisa.tensor_copy);
- tensor_avgpool_kernel: the average pool 2D of [C, H, W] through an access pattern (tensor.ap);
- the matrix multiplication tutorial: nki_matmul_basic_ (one 64 x 128 x 512 multiply),
  nki_matmul_tiled_, nki_matmul_hoist_load_, nki_matmul_block_free_dimension_ and
  nki_matmul_fully_optimized_, each returning lhsT.T @ rhs.

The loops that build a Python list of tiles are Python's `range` (NKI 0.7 deprecates
nl.affine_range for it); an nl.affine_range loop does the same (a tile lives until its last use)."""
import nki
import nki.isa as nisa
import nki.language as nl

from .matrix import _tiles, matmul_tiled


def _stored(tile):
    """A new kernel output (shared HBM) holding tile (one dma_copy)."""
    out = nl.ndarray(tile.shape, dtype=tile.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=tile)
    return out


def _loaded(src):
    """A new SBUF tile holding the HBM view src (one dma_copy)."""
    t = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return t


def _zeroed(shape, dtype):
    """A new SBUF tile of zeros (one memset)."""
    t = nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0)
    return t


# --- tensor addition ---------------------------------------------------------------------------------------

@nki.jit
def nki_tensor_add_kernel(a_input, b_input):
    """c = a + b for inputs of at most 128 rows (the partitions) and 512 columns."""
    assert a_input.shape == b_input.shape and a_input.shape[0] <= nl.tile_size.pmax
    a_tile = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.sbuf)
    b_tile = nl.ndarray(b_input.shape, dtype=b_input.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_tile, src=a_input)
    nisa.dma_copy(dst=b_tile, src=b_input)
    c_tile = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=c_tile, data1=a_tile, data2=b_tile, op=nl.add)
    return _stored(c_tile)


@nki.jit
def nki_tensor_add_kernel_(a_input, b_input):
    """c = a + b for inputs of M x N, multiples of 128 x 512: a tile of each at a time."""
    M, N = a_input.shape
    TILE_M, TILE_N = nl.tile_size.pmax, 512
    assert M % TILE_M == 0 and N % TILE_N == 0, f"{M} x {N} is not a multiple of {TILE_M} x {TILE_N}"
    c_output = nl.ndarray((M, N), dtype=a_input.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            rows, cols = nl.ds(m * TILE_M, TILE_M), nl.ds(n * TILE_N, TILE_N)
            a_tile = nl.ndarray((TILE_M, TILE_N), dtype=a_input.dtype, buffer=nl.sbuf)
            b_tile = nl.ndarray((TILE_M, TILE_N), dtype=b_input.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a_tile, src=a_input[rows, cols])
            nisa.dma_copy(dst=b_tile, src=b_input[rows, cols])
            c_tile = nl.ndarray((TILE_M, TILE_N), dtype=a_input.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=c_tile, data1=a_tile, data2=b_tile, op=nl.add)
            nisa.dma_copy(dst=c_output[rows, cols], src=c_tile)
    return c_output


@nki.jit
def getting_started_kernel(a_input, b_input):
    """The tensor addition with nki.language's calls, each making its own tile."""
    a_tile = nl.load(a_input)
    b_tile = nl.load(b_input)
    c_tile = nl.add(a_tile, b_tile)
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    nl.store(c_output, value=c_tile)
    return c_output


# --- transpose2d -------------------------------------------------------------------------------------------

@nki.jit
def tensor_transpose2D_kernel_(in_tensor, shape2D):
    """in_tensor [P, F1 * F2], each partition an F1 x F2 matrix stored row by row (F1 major), to
    [P, F2 * F1]: out[p, f2 * F1 + f1] = in[p, f1 * F2 + f2]. The partitions work in parallel; the
    transpose within each is F1 x F2 copies of one column, on the vector engine."""
    sz_p = in_tensor.shape[0]
    sz_f1, sz_f2 = shape2D
    assert in_tensor.shape[1] == sz_f1 * sz_f2, f"{in_tensor.shape} is not [P, {sz_f1} * {sz_f2}]"
    in_tile = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=in_tile, src=in_tensor)
    out_tile = nl.ndarray((sz_p, sz_f2 * sz_f1), dtype=in_tensor.dtype, buffer=nl.sbuf)
    for f1 in nl.affine_range(sz_f1):
        for f2 in nl.affine_range(sz_f2):
            nisa.tensor_copy(dst=out_tile[:, nl.ds(f2 * sz_f1 + f1, 1)], src=in_tile[:, nl.ds(f1 * sz_f2 + f2, 1)])
    return _stored(out_tile)


# --- average pool 2D -----------------------------------------------------------------------------------------

@nki.jit
def tensor_avgpool_kernel(in_tensor, pool_size):
    """in_tensor [C, H, W], the channels on the partitions, to [C, H // pool_size, W // pool_size]:
    the mean of each pool_size x pool_size window (stride pool_size; the last rows and columns that
    fill no window are dropped). The windows are a 5-D access pattern of the loaded tile (channel,
    window row, window column, row in the window, column in the window), summed over its last two
    axes, then divided by the window's size."""
    C, H, W = in_tensor.shape
    k = pool_size
    assert C <= nl.tile_size.pmax, f"{C} channels: at most {nl.tile_size.pmax} (the partitions)"
    in_tile = _loaded(in_tensor)
    windows = in_tile.ap(pattern=[[H * W, C], [k * W, H // k], [k, W // k], [W, k], [1, k]], offset=0)
    sums = nl.sum(windows, axis=[3, 4])
    out_tile = nl.ndarray((C, H // k, W // k), dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=out_tile, data=sums, op0=nl.divide, operand0=float(k * k))
    return _stored(out_tile)


# --- matrix multiplication ---------------------------------------------------------------------------------

def _dims(lhsT, rhs, m_tiles=1, n_tiles=1, k_tiles=1):
    """K, M, N of lhsT [K, M] and rhs [K, N], checked to be whole blocks of m_tiles x n_tiles x
    k_tiles tensor-engine tiles, and the result [M, N] in shared HBM."""
    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_, f"lhsT has {K} contraction rows, rhs {K_}"
    TILE_M, TILE_K, TILE_N = _tiles()
    for name, size, unit in (("K", K, TILE_K * k_tiles), ("M", M, TILE_M * m_tiles), ("N", N, TILE_N * n_tiles)):
        assert size % unit == 0, f"{name} = {size} is not a multiple of {unit}"
    return K, M, N, nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)


def _evict(res_psum, result, rows, cols):
    """A finished PSUM tile: copied into the SBUF in the result's dtype, then stored to HBM."""
    res_sb = nl.ndarray(res_psum.shape, dtype=result.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res_sb, src=res_psum)
    nisa.dma_copy(dst=result[rows, cols], src=res_sb)


@nki.jit
def nki_matmul_basic_(lhsT, rhs):
    """One multiply: lhsT [128 (K), 64 (M)], rhs [128 (K), 512 (N)] -> [64, 512]. The contraction
    lies on the partitions of both operands, so the left one comes transposed."""
    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_ == nl.tile_size.pmax and M <= nl.tile_size.gemm_stationary_fmax and \
        N <= nl.tile_size.gemm_moving_fmax, f"one tile each: lhsT {lhsT.shape}, rhs {rhs.shape}"
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    res_psum = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=res_psum, stationary=_loaded(lhsT), moving=_loaded(rhs))
    _evict(res_psum, result, slice(0, M), slice(0, N))
    return result


# The tiled product: every 128 x 512 result tile accumulates K / 128 multiplies in PSUM, both
# operand tiles loaded for each (the handout's matmul_tiled is this kernel).
nki_matmul_tiled_ = matmul_tiled


@nki.jit
def nki_matmul_hoist_load_(lhsT, rhs):
    """The loads out of the contraction loop: the K / 128 lhsT tiles of a row of result tiles are
    loaded once for the row, the rhs tiles of a result tile once for the tile."""
    K, M, N, result = _dims(lhsT, rhs)
    TILE_M, TILE_K, TILE_N = _tiles()
    for m in nl.affine_range(M // TILE_M):
        rows = nl.ds(m * TILE_M, TILE_M)
        lhsT_tiles = [_loaded(lhsT[nl.ds(k * TILE_K, TILE_K), rows]) for k in range(K // TILE_K)]
        for n in nl.affine_range(N // TILE_N):
            cols = nl.ds(n * TILE_N, TILE_N)
            rhs_tiles = [_loaded(rhs[nl.ds(k * TILE_K, TILE_K), cols]) for k in range(K // TILE_K)]
            res_psum = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                nisa.nc_matmul(dst=res_psum, stationary=lhsT_tiles[k], moving=rhs_tiles[k])
            _evict(res_psum, result, rows, cols)
    return result


@nki.jit
def nki_matmul_block_free_dimension_(lhsT, rhs):
    """Both free dimensions blocked: per block of TILES_IN_BLOCK_M result rows the lhsT tiles of
    all of them are loaded, per block of TILES_IN_BLOCK_N result columns the rhs tiles, and each
    result tile of the block accumulates the whole contraction from them."""
    TILES_IN_BLOCK_M, TILES_IN_BLOCK_N = 2, 2
    K, M, N, result = _dims(lhsT, rhs, TILES_IN_BLOCK_M, TILES_IN_BLOCK_N)
    TILE_M, TILE_K, TILE_N = _tiles()
    BLOCK_M, BLOCK_N = TILE_M * TILES_IN_BLOCK_M, TILE_N * TILES_IN_BLOCK_N
    for m in nl.affine_range(M // BLOCK_M):
        # lhsT_tiles[bm][k]: [128 (K), 128 (M)]
        lhsT_tiles = [[_loaded(lhsT[nl.ds(k * TILE_K, TILE_K), nl.ds(m * BLOCK_M + bm * TILE_M, TILE_M)])
                       for k in range(K // TILE_K)] for bm in range(TILES_IN_BLOCK_M)]
        for n in nl.affine_range(N // BLOCK_N):
            rhs_tiles = [[_loaded(rhs[nl.ds(k * TILE_K, TILE_K), nl.ds(n * BLOCK_N + bn * TILE_N, TILE_N)])
                          for k in range(K // TILE_K)] for bn in range(TILES_IN_BLOCK_N)]
            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    res_psum = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(K // TILE_K):
                        nisa.nc_matmul(dst=res_psum, stationary=lhsT_tiles[bm][k], moving=rhs_tiles[bn][k])
                    _evict(res_psum, result, nl.ds(m * BLOCK_M + bm * TILE_M, TILE_M),
                           nl.ds(n * BLOCK_N + bn * TILE_N, TILE_N))
    return result


@nki.jit
def nki_matmul_fully_optimized_(lhsT, rhs, TILES_IN_BLOCK_M=16, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=8):
    """All three dimensions blocked. For each block of result columns, the result tiles of the
    whole column are running sums in the SBUF (in the result's dtype), zeroed by memset; the K
    blocks are walked in order (sequential_range: their additions into the running sums must not
    be reordered), each loading its rhs and lhsT tiles once, and every result tile of a block
    gets TILES_IN_BLOCK_K multiplies in PSUM, added into its running sum on the vector engine.
    Each result row's TILES_IN_BLOCK_N tiles lie side by side in one SBUF tile, stored with one
    transfer."""
    K, M, N, result = _dims(lhsT, rhs, TILES_IN_BLOCK_M, TILES_IN_BLOCK_N, TILES_IN_BLOCK_K)
    TILE_M, TILE_K, TILE_N = _tiles()
    BLOCK_M, BLOCK_N, BLOCK_K = TILE_M * TILES_IN_BLOCK_M, TILE_N * TILES_IN_BLOCK_N, TILE_K * TILES_IN_BLOCK_K
    for n in nl.affine_range(N // BLOCK_N):
        # result_tiles[m][bm]: [128 (M), TILES_IN_BLOCK_N, 512 (N)], the running sums
        result_tiles = [[_zeroed((TILE_M, TILES_IN_BLOCK_N, TILE_N), result.dtype) for _ in range(TILES_IN_BLOCK_M)]
                        for _ in range(M // BLOCK_M)]
        for k in nl.sequential_range(K // BLOCK_K):
            rhs_tiles = [_loaded(rhs[nl.ds(k * BLOCK_K + bk * TILE_K, TILE_K), nl.ds(n * BLOCK_N, BLOCK_N)])
                         for bk in range(TILES_IN_BLOCK_K)]
            for m in nl.affine_range(M // BLOCK_M):
                lhsT_tiles = [_loaded(lhsT[nl.ds(k * BLOCK_K + bk * TILE_K, TILE_K), nl.ds(m * BLOCK_M, BLOCK_M)])
                              for bk in range(TILES_IN_BLOCK_K)]
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    for bm in nl.affine_range(TILES_IN_BLOCK_M):
                        res_psum = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(TILES_IN_BLOCK_K):
                            nisa.nc_matmul(dst=res_psum, stationary=lhsT_tiles[bk][:, nl.ds(bm * TILE_M, TILE_M)],
                                           moving=rhs_tiles[bk][:, nl.ds(bn * TILE_N, TILE_N)])
                        running = result_tiles[m][bm][:, bn, :]
                        nisa.tensor_tensor(dst=running, data1=running, data2=res_psum, op=nl.add)
        for m in nl.affine_range(M // BLOCK_M):
            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                nisa.dma_copy(dst=result[nl.ds(m * BLOCK_M + bm * TILE_M, TILE_M), nl.ds(n * BLOCK_N, BLOCK_N)],
                              src=result_tiles[m][bm].reshape((TILE_M, BLOCK_N)))
    return result
