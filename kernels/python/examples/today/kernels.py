"""The handouts' part 1 kernels (vector add, matrix transpose) in today's NKI (`import nki`, NKI
0.3 to 0.7): the twins of kernels.py's neuronxcc.nki kernels and of their C++ twins in
kernels/src, with the same instructions in the same order, so each traces to the same Program
(tests/python/test_twins_today.py checks it).

What today's spelling changes: the ISA calls write into a destination allocated first
(`nisa.tensor_tensor(dst, a, b, op)`), block dimensions (`nl.par_dim`) are Python lists of
tiles (or free dimensions where the tiles must lie side by side as the block's did:
today/conv2d.py), direct allocation is `nl.ndarray(..., address=(partition, byte offset))`, and
loops run as Python runs them. The sizes come from ../sizes.py, as the neuronxcc twins' do."""
import nki
import nki.isa as nisa
import nki.language as nl

from sizes import transpose_groups


def _itemsize(dtype):
    """Bytes per element of the kernels' dtypes (float32, or a 16-bit float)."""
    return 4 if dtype == nl.float32 else 2


@nki.jit
def vector_add_naive(a_vec, b_vec):
    """a + b for vectors of at most 128 elements: one element per partition."""
    # Allocate space for the output vector in HBM
    out = nl.ndarray(a_vec.shape, dtype=a_vec.dtype, buffer=nl.shared_hbm)

    # Allocate space for the input vectors in SBUF and copy them from HBM
    a_sbuf = nl.ndarray((a_vec.shape[0], 1), dtype=a_vec.dtype, buffer=nl.sbuf)
    b_sbuf = nl.ndarray((b_vec.shape[0], 1), dtype=b_vec.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_sbuf, src=a_vec)
    nisa.dma_copy(dst=b_sbuf, src=b_vec)

    # Add the input vectors: b, one element per partition, is the scalar operand
    res = nl.ndarray((a_vec.shape[0], 1), dtype=a_vec.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=res, data=a_sbuf, op0=nl.add, operand0=b_sbuf)

    # Store the result into HBM
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def vector_add_tiled(a_vec, b_vec, ROW_CHUNK=128):
    """a + b, ROW_CHUNK elements (one per partition) at a time."""
    out = nl.ndarray(a_vec.shape, dtype=a_vec.dtype, buffer=nl.shared_hbm)
    M = a_vec.shape[0]
    assert M % ROW_CHUNK == 0, f"vector length {M} is not a multiple of ROW_CHUNK = {ROW_CHUNK}"

    # No loop-carried dependencies: affine_range
    for m in nl.affine_range(M // ROW_CHUNK):
        a_tile = nl.ndarray((ROW_CHUNK, 1), dtype=a_vec.dtype, buffer=nl.sbuf)
        b_tile = nl.ndarray((ROW_CHUNK, 1), dtype=b_vec.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_tile, src=a_vec[m * ROW_CHUNK:(m + 1) * ROW_CHUNK])
        nisa.dma_copy(dst=b_tile, src=b_vec[m * ROW_CHUNK:(m + 1) * ROW_CHUNK])

        res = nl.ndarray((ROW_CHUNK, 1), dtype=a_vec.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=res, data=a_tile, op0=nl.add, operand0=b_tile)

        nisa.dma_copy(dst=out[m * ROW_CHUNK:(m + 1) * ROW_CHUNK], src=res)
    return out


@nki.jit
def vector_add_stream(a_vec, b_vec, FREE_DIM=200):
    """a + b through (128, FREE_DIM) tiles of the vectors viewed as (128, n / 128) matrices."""
    M = a_vec.shape[0]
    PARTITION_DIM = nl.tile_size.pmax
    assert M % (PARTITION_DIM * FREE_DIM) == 0, \
        f"vector length {M} is not a multiple of PARTITION_DIM * FREE_DIM = {PARTITION_DIM * FREE_DIM}"

    # The vectors as (128, M / 128) matrices
    a_vec_re = a_vec.reshape((PARTITION_DIM, M // PARTITION_DIM))
    b_vec_re = b_vec.reshape((PARTITION_DIM, M // PARTITION_DIM))
    out = nl.ndarray(a_vec_re.shape, dtype=a_vec.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // (PARTITION_DIM * FREE_DIM)):
        cols = nl.ds(m * FREE_DIM, FREE_DIM)
        a_tile = nl.ndarray((PARTITION_DIM, FREE_DIM), dtype=a_vec.dtype, buffer=nl.sbuf)
        b_tile = nl.ndarray((PARTITION_DIM, FREE_DIM), dtype=b_vec.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_tile, src=a_vec_re[:, cols])
        nisa.dma_copy(dst=b_tile, src=b_vec_re[:, cols])

        # Whole tiles: tensor_tensor rather than tensor_scalar
        res = nl.ndarray((PARTITION_DIM, FREE_DIM), dtype=a_vec.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=res, data1=a_tile, data2=b_tile, op=nl.add)

        nisa.dma_copy(dst=out[:, cols], src=res)

    # Back to the inputs' shape
    return out.reshape(a_vec.shape)


@nki.jit
def vector_add_load_store(a_vec, b_vec, FREE_DIM=200):
    """The Trainium1 handout's vector_add_stream in nki.language's calls, each making its own
    tile: nl.load, nl.add, nl.store of (128, FREE_DIM) tiles."""
    M = a_vec.shape[0]
    P = nl.tile_size.pmax
    n_tiles = M // (P * FREE_DIM)
    a_re, b_re = (v.reshape((n_tiles, P, FREE_DIM)) for v in (a_vec, b_vec))
    out = nl.ndarray((n_tiles, P, FREE_DIM), dtype=a_vec.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(n_tiles):
        nl.store(out[m], value=nl.add(nl.load(a_re[m]), nl.load(b_re[m])))
    return out.reshape((M,))


@nki.jit
def vector_add_direct_allocation(a_vec, b_vec, separate=True):
    """a + b (n a multiple of 128000) through tiles placed at fixed SBUF addresses: each input and
    the result get FREE_DIM_TILES physical (128, FREE_DIM) tiles side by side, used in turn by the
    logical tiles (tile m in slot m % FREE_DIM_TILES). `separate`: the three regions 16000 bytes
    apart, as the handout places them; otherwise all at offset 0 (the _bad variant)."""
    FREE_DIM = 1000
    FREE_DIM_TILES = 4
    PARTITION_DIM = 128
    M = a_vec.shape[0]
    TILE_M = PARTITION_DIM * FREE_DIM
    N_TILES = M // TILE_M

    out = nl.ndarray(a_vec.shape, dtype=a_vec.dtype, buffer=nl.shared_hbm)
    a_re = a_vec.reshape((N_TILES, PARTITION_DIM, FREE_DIM))
    b_re = b_vec.reshape((N_TILES, PARTITION_DIM, FREE_DIM))
    out_re = out.reshape((N_TILES, PARTITION_DIM, FREE_DIM))

    # The regions' byte offsets in every partition (the handout steps by 4 bytes per element)
    step = FREE_DIM_TILES * FREE_DIM * 4 if separate else 0
    a_base, b_base, res_base = 0, step, 2 * step
    tile_bytes = FREE_DIM * _itemsize(a_vec.dtype)

    def placed(base, m, dtype):
        return nl.ndarray((PARTITION_DIM, FREE_DIM), dtype=dtype, buffer=nl.sbuf,
                          address=(0, base + (m % FREE_DIM_TILES) * tile_bytes))

    a_tiles = [placed(a_base, m, a_vec.dtype) for m in range(N_TILES)]
    b_tiles = [placed(b_base, m, b_vec.dtype) for m in range(N_TILES)]
    res_tiles = [placed(res_base, m, out.dtype) for m in range(N_TILES)]

    for m in nl.affine_range(N_TILES):
        nisa.dma_copy(dst=a_tiles[m], src=a_re[m])
        nisa.dma_copy(dst=b_tiles[m], src=b_re[m])
        nisa.tensor_tensor(dst=res_tiles[m], data1=a_tiles[m], data2=b_tiles[m], op=nl.add)
        nisa.dma_copy(dst=out_re[m], src=res_tiles[m])

    return out.reshape((M, 1))


@nki.jit
def vector_add_direct_allocation_bad(a_vec, b_vec):
    """vector_add_direct_allocation with a, b and the result at one address: wrong on purpose."""
    return vector_add_direct_allocation(a_vec, b_vec, separate=False)


@nki.jit
def matrix_transpose(a_tensor):
    """out [N, M] = a_tensor [M, N].T on the tensor engine (nc_transpose, 128 x 128 blocks through
    PSUM), M and N multiples of 128, moved in groups of blocks (see kernels/src/matrix.cpp)."""
    M, N = a_tensor.shape
    out = nl.ndarray((N, M), dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    tile_dim = nl.tile_size.pmax  # 128

    # Groups of ROWS row blocks x COLS column blocks, about 4 KiB per partition each way: one
    # DMA per input panel [128, COLS*128], one per output row tile [128, ROWS*128].
    sz = transpose_groups(M, N, _itemsize(a_tensor.dtype))
    ROWS, COLS, PER_BANK, NBANKS = sz.ROWS, sz.COLS, sz.PER_BANK, sz.NBANKS
    GROUP_COLS, GROUPS = sz.GROUP_COLS, sz.GROUPS
    BANK = nl.tile_size.psum_bank_fmax  # 512 fp32: one PSUM bank per partition

    # Group i is loaded into panel buffer i % NBUF and transposed while group i + 1 loads.
    NBUF = min(4, GROUPS + 1)
    panels = [[nl.ndarray((tile_dim, COLS * tile_dim), dtype=a_tensor.dtype, buffer=nl.sbuf) for _ in range(ROWS)]
              for _ in range(NBUF)]

    def load_group(i):
        g, h = i // GROUP_COLS, i % GROUP_COLS
        for r in range(ROWS):
            nisa.dma_copy(dst=panels[i % NBUF][r],
                          src=a_tensor[(g * ROWS + r) * tile_dim:(g * ROWS + r + 1) * tile_dim,
                                       h * COLS * tile_dim:(h + 1) * COLS * tile_dim])

    def transpose_group(i):
        g, h = i // GROUP_COLS, i % GROUP_COLS
        panel = panels[i % NBUF]
        for c in nl.affine_range(COLS):
            # Block column c of every panel, transposed side by side: row block h*COLS + c of out.
            t_psum = [nl.ndarray((tile_dim, BANK), dtype=nl.float32, buffer=nl.psum) for _ in range(NBANKS)]
            for r in range(ROWS):
                p0 = (r % PER_BANK) * tile_dim
                nisa.nc_transpose(dst=t_psum[r // PER_BANK][:, p0:p0 + tile_dim],
                                  data=panel[r][:, c * tile_dim:(c + 1) * tile_dim])

            # Copy out of PSUM (back to the input dtype) and store ROWS*128 columns at once.
            out_tile = nl.ndarray((tile_dim, ROWS * tile_dim), dtype=a_tensor.dtype, buffer=nl.sbuf)
            for b in range(NBANKS):
                w = min(BANK, (ROWS - b * PER_BANK) * tile_dim)
                nisa.tensor_copy(dst=out_tile[:, b * BANK:b * BANK + w], src=t_psum[b][:, 0:w])
            rows_out, cols_out = nl.ds((h * COLS + c) * tile_dim, tile_dim), nl.ds(g * ROWS * tile_dim, ROWS * tile_dim)
            nisa.dma_copy(dst=out[rows_out, cols_out], src=out_tile)

    # Iteration i loads group i and transposes group i - 1, loaded by the iteration before.
    for i in nl.sequential_range(GROUPS + 1):
        if i < GROUPS:
            load_group(i)
        if i > 0:
            transpose_group(i - 1)
    return out
