"""The handouts' part 1 kernels in NKI Python, written as a student writes them for the chip (vector
add, matrix transpose). Each has a C++ twin in kernels/src/ that traces to the same
Program (tests/python checks it); the tunable sizes are keyword arguments here so that the
scripts can set them (ROW_CHUNK, FREE_DIM)."""
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from sizes import transpose_groups


@nki.compiler.skip_middle_end_transformations
@nki.jit
def vector_add_naive(a_vec, b_vec):
    # Allocate space for the output vector in HBM
    out = nl.ndarray(shape=a_vec.shape, dtype=a_vec.dtype, buffer=nl.hbm)

    # Allocate space for the input vectors in SBUF and copy them from HBM
    a_sbuf = nl.ndarray(shape=(a_vec.shape[0], 1), dtype=a_vec.dtype, buffer=nl.sbuf)
    b_sbuf = nl.ndarray(shape=(b_vec.shape[0], 1), dtype=b_vec.dtype, buffer=nl.sbuf)

    nisa.dma_copy(src=a_vec, dst=a_sbuf)
    nisa.dma_copy(src=b_vec, dst=b_sbuf)

    # Add the input vectors
    res = nisa.tensor_scalar(a_sbuf, nl.add, b_sbuf)

    # Store the result into HBM
    nisa.dma_copy(src=res, dst=out)

    return out


@nki.compiler.skip_middle_end_transformations
@nki.jit
def vector_add_tiled(a_vec, b_vec, ROW_CHUNK=128):
    # Allocate space for the output vector in HBM
    out = nl.ndarray(shape=a_vec.shape, dtype=a_vec.dtype, buffer=nl.hbm)

    # Get the total number of vector rows
    M = a_vec.shape[0]
    assert M % ROW_CHUNK == 0, f"vector length {M} is not a multiple of ROW_CHUNK = {ROW_CHUNK}"

    # Loop over the total number of chunks, we can use affine_range
    # because there are no loop-carried dependencies
    for m in nl.affine_range(M // ROW_CHUNK):

        # Allocate row-chunk sized tiles for the input vectors
        a_tile = nl.ndarray((ROW_CHUNK, 1), dtype=a_vec.dtype, buffer=nl.sbuf)
        b_tile = nl.ndarray((ROW_CHUNK, 1), dtype=b_vec.dtype, buffer=nl.sbuf)

        # Load a chunk of rows
        nisa.dma_copy(src=a_vec[m * ROW_CHUNK : (m + 1) * ROW_CHUNK], dst=a_tile)
        nisa.dma_copy(src=b_vec[m * ROW_CHUNK : (m + 1) * ROW_CHUNK], dst=b_tile)

        # Add the row chunks together
        res = nisa.tensor_scalar(a_tile, nl.add, b_tile)

        # Store the result chunk into HBM
        nisa.dma_copy(src=res, dst=out[m * ROW_CHUNK : (m + 1) * ROW_CHUNK])

    return out


@nki.compiler.skip_middle_end_transformations
@nki.jit
def vector_add_stream(a_vec, b_vec, FREE_DIM=200):
    # Get the total number of vector rows
    M = a_vec.shape[0]

    # The maximum size of our Partition Dimension
    PARTITION_DIM = 128
    assert M % (PARTITION_DIM * FREE_DIM) == 0, \
        f"vector length {M} is not a multiple of PARTITION_DIM * FREE_DIM = {PARTITION_DIM * FREE_DIM}"

    a_vec_re = a_vec.reshape((PARTITION_DIM, M // PARTITION_DIM))
    b_vec_re = b_vec.reshape((PARTITION_DIM, M // PARTITION_DIM))
    out = nl.ndarray(shape=a_vec_re.shape, dtype=a_vec_re.dtype, buffer=nl.hbm)

    # Loop over the total number of tiles
    for m in nl.affine_range(M // (PARTITION_DIM * FREE_DIM)):

        # Allocate space for a reshaped tile
        a_tile = nl.ndarray((PARTITION_DIM, FREE_DIM), dtype=a_vec.dtype, buffer=nl.sbuf)
        b_tile = nl.ndarray((PARTITION_DIM, FREE_DIM), dtype=b_vec.dtype, buffer=nl.sbuf)

        # Load the input tiles
        nisa.dma_copy(src=a_vec_re[:, m * FREE_DIM : (m + 1) * FREE_DIM], dst=a_tile)
        nisa.dma_copy(src=b_vec_re[:, m * FREE_DIM : (m + 1) * FREE_DIM], dst=b_tile)

        # Add the tiles together. Note that we must switch to tensor_tensor instead of tensor_scalar
        res = nisa.tensor_tensor(a_tile, b_tile, op=nl.add)

        # Store the result tile into HBM
        nisa.dma_copy(src=res, dst=out[:, m * FREE_DIM : (m + 1) * FREE_DIM])

    # Reshape the output vector into its original shape
    out = out.reshape(a_vec.shape)

    return out


def _direct_allocation(a_vec, b_vec, separate):
    # Create output tensor in HBM
    out = nl.ndarray(a_vec.shape, dtype=a_vec.dtype, buffer=nl.shared_hbm)

    # Define constants for free dimension, physical tile count, and partition dimension
    FREE_DIM = 1000
    FREE_DIM_TILES = 4
    PARTITION_DIM = 128

    # Get the total number of vector rows
    M = a_vec.shape[0]

    # Define the size of each tile
    TILE_M = PARTITION_DIM * FREE_DIM

    # Reshape the the input vectors
    a_vec = a_vec.reshape((M // TILE_M, PARTITION_DIM, FREE_DIM))
    b_vec = b_vec.reshape((M // TILE_M, PARTITION_DIM, FREE_DIM))
    out = out.reshape((M // TILE_M, PARTITION_DIM, FREE_DIM))

    # Get the total number of tiles
    N_TILES = M // TILE_M

    # Initialize the starting byte offset for a_tensor
    current_offset = 0

    # Allocate space for the entire reshaped a_tensor with 4 physical tiles
    a_tile = nl.ndarray((N_TILES, nl.par_dim(PARTITION_DIM), FREE_DIM), dtype=a_vec.dtype,
                        buffer=ncc.sbuf.mod_alloc(base_addr=current_offset, num_free_tiles=(FREE_DIM_TILES,)))

    # Increment the starting byte offset for b_tensor based on tile and feature size
    if separate:
        current_offset += FREE_DIM_TILES * FREE_DIM * 4

    # Allocate space for the entire reshaped b_tensor with 4 physical tiles
    b_tile = nl.ndarray((N_TILES, nl.par_dim(PARTITION_DIM), FREE_DIM), dtype=b_vec.dtype,
                        buffer=ncc.sbuf.mod_alloc(base_addr=current_offset, num_free_tiles=(FREE_DIM_TILES,)))

    # Increment the starting byte offset, and allocate space for the entire reshaped out_tensor
    if separate:
        current_offset += FREE_DIM_TILES * FREE_DIM * 4
    res_tile = nl.ndarray((N_TILES, nl.par_dim(PARTITION_DIM), FREE_DIM), dtype=out.dtype,
                          buffer=ncc.sbuf.mod_alloc(base_addr=current_offset, num_free_tiles=(FREE_DIM_TILES,)))

    # Loop over the total number of tiles
    for m in nl.affine_range(N_TILES):
        # Load the input tiles
        a_tile[m] = nl.load(a_vec[m])
        b_tile[m] = nl.load(b_vec[m])

        # Add the tiles together
        res_tile[m] = nisa.tensor_tensor(a_tile[m], b_tile[m], op=nl.add)

        # Store the result tile into HBM
        nl.store(out[m], value=res_tile[m])

    # Reshape the output vector into its original shape
    out = out.reshape((M, 1))

    return out


@nki.jit
def vector_add_direct_allocation(a_vec, b_vec):
    return _direct_allocation(a_vec, b_vec, True)


@nki.jit
def vector_add_direct_allocation_bad(a_vec, b_vec):
    return _direct_allocation(a_vec, b_vec, False)


@nki.jit
def vector_add_load_store(a_vec, b_vec, FREE_DIM=200):
    """The Trainium1 handout's vector_add_stream: nl.load, nl.add, nl.store."""
    M = a_vec.shape[0]
    PARTITION_DIM = 128
    TILE_M = PARTITION_DIM * FREE_DIM

    # Reshape the the input vectors
    a_vec_re = a_vec.reshape((M // TILE_M, PARTITION_DIM, FREE_DIM))
    b_vec_re = b_vec.reshape((M // TILE_M, PARTITION_DIM, FREE_DIM))

    # Allocate space for the reshaped output vector in HBM
    out = nl.ndarray(shape=a_vec_re.shape, dtype=a_vec_re.dtype, buffer=nl.hbm)

    # Loop over the total number of tiles
    for m in nl.affine_range((M // TILE_M)):
        # Load the input tiles
        a_tile = nl.load(a_vec_re[m])
        b_tile = nl.load(b_vec_re[m])

        # Add the tiles together
        res = nl.add(a_tile, b_tile)

        # Store the result tile into HBM
        nl.store(out[m], value=res)

    # Reshape the output vector into its original shape
    out = out.reshape((M,))

    return out


@nki.compiler.skip_middle_end_transformations
@nki.jit
def matrix_transpose(a_tensor):
    M, N = a_tensor.shape
    out = nl.ndarray((N, M), dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    tile_dim = nl.tile_size.pmax  # 128

    # Groups of ROWS row blocks x COLS column blocks, about 4 KiB per partition each way: one
    # DMA per input panel [128, COLS*128], one per output row tile [128, ROWS*128].
    sz = transpose_groups(M, N, 4 if a_tensor.dtype == nl.float32 else 2)
    ROWS, COLS, PER_BANK, NBANKS = sz.ROWS, sz.COLS, sz.PER_BANK, sz.NBANKS
    GROUP_COLS, GROUPS = sz.GROUP_COLS, sz.GROUPS
    BANK = nl.tile_size.psum_fmax  # 512 fp32: one PSUM bank per partition

    # Group i is loaded into panel buffer i % NBUF; it is transposed while group i + 1 loads. The
    # loop body is the same in every iteration, as NKI traces it once: the first load goes
    # before the loop and the last transpose after it, the buffers are picked by index.
    NBUF = min(4, GROUPS + 1)
    panels = nl.ndarray((NBUF, ROWS, nl.par_dim(tile_dim), COLS * tile_dim), dtype=a_tensor.dtype,
                        buffer=nl.sbuf)

    def load_group(i):
        g, h = i // GROUP_COLS, i % GROUP_COLS
        panel = panels[i % NBUF]
        for r in range(ROWS):
            nisa.dma_copy(dst=panel[r], src=a_tensor[(g * ROWS + r) * tile_dim:(g * ROWS + r + 1) * tile_dim,
                                                     h * COLS * tile_dim:(h + 1) * COLS * tile_dim])

    def transpose_group(i):
        g, h = i // GROUP_COLS, i % GROUP_COLS
        panel = panels[i % NBUF]
        for c in nl.affine_range(COLS):
            # Block column c of every panel, transposed side by side: row block h*COLS + c of out.
            t_psum = nl.ndarray((NBANKS, nl.par_dim(tile_dim), BANK), dtype=nl.float32, buffer=nl.psum)
            for r in range(ROWS):
                p0 = (r % PER_BANK) * tile_dim
                t_psum[r // PER_BANK][:, p0:p0 + tile_dim] = \
                    nisa.nc_transpose(panel[r][:, c * tile_dim:(c + 1) * tile_dim])

            # Copy out of PSUM (back to the input dtype) and store ROWS*128 columns at once.
            out_tile = nl.ndarray((tile_dim, ROWS * tile_dim), dtype=a_tensor.dtype, buffer=nl.sbuf)
            for b in range(NBANKS):
                w = min(BANK, (ROWS - b * PER_BANK) * tile_dim)
                out_tile[:, b * BANK:b * BANK + w] = nisa.tensor_copy(t_psum[b][:, 0:w])
            nisa.dma_copy(dst=out[(h * COLS + c) * tile_dim:(h * COLS + c + 1) * tile_dim,
                                  g * ROWS * tile_dim:(g + 1) * ROWS * tile_dim], src=out_tile)

    load_group(0)
    for i in nl.sequential_range(1, GROUPS):
        load_group(i)
        transpose_group(i - 1)
    transpose_group(GROUPS - 1)
    return out
