"""The four kernels of the NKI matrix multiplication tutorial, rewritten for this project from what
the tutorial says each one does, so that `tools/fidelity` and the tests can time them against the
tutorial's published trn1 latencies without the tutorial's own file (which is not ours to commit).

Every kernel computes result[M, N] = lhsT[K, M].T @ rhs[K, N], takes the left operand already
transposed (the contraction axis on the partitions, as the tensor engine wants both operands) and
writes into its `result` argument, as the tutorial's kernels at the measured release do
(`kernel(lhsT, rhs, result)`). The steps differ only in how often each byte crosses from HBM, so
each keeps the tutorial's loop order, its buffers and its calls (nl.load, nl.matmul or
nisa.nc_matmul, nl.copy, nl.store): the same instructions in the same order, which is what makes
the timing comparable.

- nki_matmul_tiled_: one PSUM tile of the result at a time, both operand tiles loaded afresh for
  every multiply (two loads per matmul: memory bound).
- nki_matmul_hoist_load_: a column strip of lhsT loaded once per row of result tiles, and a
  column strip of rhs once per result tile, both kept in the SBUF over the contraction loop.
- nki_matmul_block_free_dimension_: the strips loaded per block of 2 x 2 result tiles, so each
  loaded strip serves two tiles.
- nki_matmul_fully_optimized_: all three dimensions blocked (TILES_IN_BLOCK_M/N/K, 16/2/8 by
  default); the contraction is split into K blocks whose partial products are added into a
  result block held in the SBUF (in the result's dtype), and each finished row of the block is
  gathered into one wide tile and stored with one transfer.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

__all__ = ["nki_matmul_tiled_", "nki_matmul_hoist_load_", "nki_matmul_block_free_dimension_",
           "nki_matmul_fully_optimized_"]


def _geometry(lhsT, rhs, result, m_tiles=1, n_tiles=1, k_tiles=1):
    """The tensor engine's tile sizes (rows of the contraction, stationary columns, moving columns:
    128, 128, 512) and the product's K, M, N, checked against the result and against blocks of
    m_tiles x n_tiles x k_tiles tiles."""
    kp = nl.tile_size.pmax
    tm = nl.tile_size.gemm_stationary_fmax
    tn = nl.tile_size.gemm_moving_fmax
    k_dim, m_dim = lhsT.shape
    k_rhs, n_dim = rhs.shape
    assert k_dim == k_rhs, f"lhsT has {k_dim} contraction rows, rhs {k_rhs}"
    assert tuple(result.shape) == (m_dim, n_dim), f"result is {tuple(result.shape)}, the product ({m_dim}, {n_dim})"
    for name, size, unit in (("K", k_dim, kp * k_tiles), ("M", m_dim, tm * m_tiles), ("N", n_dim, tn * n_tiles)):
        assert size % unit == 0, f"{name} = {size} is not a multiple of {unit}"
    return (kp, tm, tn), (k_dim, m_dim, n_dim)


def _drain(psum_tile, result, rows, cols):
    """A finished PSUM tile: copied into the SBUF in the result's dtype, then stored to HBM."""
    staged = nl.copy(psum_tile, dtype=result.dtype)
    nl.store(result[rows, cols], value=staged)


@nki.jit
def nki_matmul_tiled_(lhsT, rhs, result):
    """The plain tiled product: for every 128 x 512 tile of the result, accumulate K / 128 matmuls
    in PSUM, each on a 128 x 128 lhsT tile and a 128 x 512 rhs tile loaded just for it."""
    (kp, tm, tn), (k_dim, m_dim, n_dim) = _geometry(lhsT, rhs, result)
    for mi in nl.affine_range(m_dim // tm):
        rows = nl.ds(mi * tm, tm)
        for ni in nl.affine_range(n_dim // tn):
            cols = nl.ds(ni * tn, tn)
            acc = nl.zeros((tm, tn), nl.float32, buffer=nl.psum)
            for ki in nl.affine_range(k_dim // kp):
                depth = nl.ds(ki * kp, kp)
                # Fresh SBUF tiles every step: nothing loaded is reused by the next multiply.
                a_blk = nl.ndarray((kp, tm), dtype=lhsT.dtype, buffer=nl.sbuf)
                b_blk = nl.ndarray((kp, tn), dtype=rhs.dtype, buffer=nl.sbuf)
                a_blk[...] = nl.load(lhsT[depth, rows])
                b_blk[...] = nl.load(rhs[depth, cols])
                acc += nl.matmul(a_blk[...], b_blk[...], transpose_x=True)
            _drain(acc, result, rows, cols)


@nki.jit
def nki_matmul_hoist_load_(lhsT, rhs, result):
    """The loads taken out of the contraction loop: the K / 128 lhsT tiles of a result row are
    loaded once for the whole row, the K / 128 rhs tiles of a result tile once for that tile, and
    the contraction then runs from the SBUF."""
    (kp, tm, tn), (k_dim, m_dim, n_dim) = _geometry(lhsT, rhs, result)
    depth_tiles = k_dim // kp
    for mi in nl.affine_range(m_dim // tm):
        rows = nl.ds(mi * tm, tm)
        # Both strip buffers are as wide as a moving tile, as the tutorial allocates them; the lhsT
        # strip fills the first tm columns only. The size is kept: it sets how many strips fit in
        # the SBUF at once, hence how far the next row's loads can run ahead (a tm-wide buffer
        # traces to other waits at 4096 x 8192 x 8192).
        a_strip = nl.ndarray((depth_tiles, nl.par_dim(kp), tn), dtype=lhsT.dtype, buffer=nl.sbuf)
        for ki in nl.affine_range(depth_tiles):
            a_strip[ki, :, 0:tm] = nl.load(lhsT[nl.ds(ki * kp, kp), rows])
        for ni in nl.affine_range(n_dim // tn):
            cols = nl.ds(ni * tn, tn)
            b_strip = nl.ndarray((depth_tiles, nl.par_dim(kp), tn), dtype=rhs.dtype, buffer=nl.sbuf)
            for ki in nl.affine_range(depth_tiles):
                b_strip[ki, :, :] = nl.load(rhs[nl.ds(ki * kp, kp), cols])
            acc = nl.zeros((tm, tn), nl.float32, buffer=nl.psum)
            for ki in nl.affine_range(depth_tiles):
                acc[...] += nl.matmul(a_strip[ki, :, 0:tm], b_strip[ki, :, :], transpose_x=True)
            _drain(acc, result, rows, cols)


@nki.jit
def nki_matmul_block_free_dimension_(lhsT, rhs, result):
    """Both free dimensions blocked by two tiles: per block of 2 result rows the lhsT strips of both
    are loaded, per block of 2 result columns the rhs strips of both, and the 2 x 2 result tiles
    are each accumulated over the whole contraction from those strips."""
    per_m, per_n = 2, 2
    (kp, tm, tn), (k_dim, m_dim, n_dim) = _geometry(lhsT, rhs, result, m_tiles=per_m, n_tiles=per_n)
    depth_tiles = k_dim // kp
    for mb in nl.affine_range(m_dim // (tm * per_m)):
        a_strips = nl.ndarray((per_m, depth_tiles, nl.par_dim(kp), tm), dtype=lhsT.dtype, buffer=nl.sbuf)
        for i in nl.affine_range(per_m):
            for ki in nl.affine_range(depth_tiles):
                a_strips[i, ki, :, :] = nl.load(lhsT[nl.ds(ki * kp, kp), nl.ds((mb * per_m + i) * tm, tm)])
        for nb in nl.affine_range(n_dim // (tn * per_n)):
            b_strips = nl.ndarray((per_n, depth_tiles, nl.par_dim(kp), tn), dtype=rhs.dtype, buffer=nl.sbuf)
            for j in nl.affine_range(per_n):
                for ki in nl.affine_range(depth_tiles):
                    b_strips[j, ki, :, :] = nl.load(rhs[nl.ds(ki * kp, kp), nl.ds((nb * per_n + j) * tn, tn)])
            for i in nl.affine_range(per_m):
                for j in nl.affine_range(per_n):
                    acc = nl.zeros((tm, tn), nl.float32, buffer=nl.psum)
                    for ki in nl.affine_range(depth_tiles):
                        acc += nl.matmul(a_strips[i, ki, :, :], b_strips[j, ki, :, :], transpose_x=True)
                    _drain(acc, result, nl.ds((mb * per_m + i) * tm, tm), nl.ds((nb * per_n + j) * tn, tn))


@nki.jit
def nki_matmul_fully_optimized_(lhsT, rhs, result, TILES_IN_BLOCK_M=16, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=8):
    """All three dimensions blocked. For each block of result columns (TILES_IN_BLOCK_N moving
    tiles), a running sum of the whole column block lives in the SBUF in the result's dtype; the
    contraction walks K blocks in order (sequential_range: their additions into the running sum
    must not be reordered), loading each rhs row of the block as one wide tile, then for each
    block of result rows its lhsT rows as one wide tile, and every result tile of the block gets
    TILES_IN_BLOCK_K matmuls in PSUM, added into the running sum. At the end each row of result
    tiles is gathered into one wide SBUF tile and stored with a single transfer."""
    per_m, per_n, per_k = TILES_IN_BLOCK_M, TILES_IN_BLOCK_N, TILES_IN_BLOCK_K
    (kp, tm, tn), (k_dim, m_dim, n_dim) = _geometry(lhsT, rhs, result, m_tiles=per_m, n_tiles=per_n, k_tiles=per_k)
    width_m, width_n, depth = tm * per_m, tn * per_n, kp * per_k
    m_blocks = m_dim // width_m
    for nb in nl.affine_range(n_dim // width_n):
        col0 = nb * width_n
        running = nl.zeros((m_blocks, per_m, per_n, nl.par_dim(tm), tn), dtype=lhsT.dtype, buffer=nl.sbuf)
        for kb in nl.sequential_range(k_dim // depth):
            # One load per 128 contraction rows, each spanning the whole column block.
            b_rows = nl.ndarray((per_k, nl.par_dim(kp), width_n), dtype=rhs.dtype, buffer=nl.sbuf)
            for r in nl.affine_range(per_k):
                b_rows[r, :, :] = nl.load(rhs[nl.ds((kb * per_k + r) * kp, kp), nl.ds(col0, width_n)])
            for mb in nl.affine_range(m_blocks):
                a_rows = nl.ndarray((per_k, nl.par_dim(kp), width_m), dtype=lhsT.dtype, buffer=nl.sbuf)
                for r in nl.affine_range(per_k):
                    a_rows[r, :, :] = nl.load(lhsT[nl.ds((kb * per_k + r) * kp, kp), nl.ds(mb * width_m, width_m)])
                for j in nl.affine_range(per_n):
                    for i in nl.affine_range(per_m):
                        part = nl.zeros((tm, tn), dtype=nl.float32, buffer=nl.psum)
                        for r in nl.affine_range(per_k):
                            part[...] += nisa.nc_matmul(a_rows[r, :, nl.ds(i * tm, tm)],
                                                        b_rows[r, :, nl.ds(j * tn, tn)])
                        running[mb, i, j, :, :] += part[:, :]
        for mb in nl.affine_range(m_blocks):
            for i in nl.affine_range(per_m):
                wide = nl.ndarray((tm, width_n), dtype=running.dtype, buffer=nl.sbuf)
                for j in nl.affine_range(per_n):
                    wide[:, nl.ds(j * tn, tn)] = nl.copy(running[mb, i, j, :, :])
                nl.store(result[nl.ds((mb * per_m + i) * tm, tm), nl.ds(col0, width_n)], value=wide[:, :])
