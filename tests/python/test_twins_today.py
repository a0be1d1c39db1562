"""Each kernel of kernels/python/examples/today, the twins in today's NKI (`import nki`:
destination-first ISA calls, Python lists of tiles or free dimensions for block dimensions,
nl.ndarray(address=) for direct allocation, loops run as Python), traces to the same Program as its
C++ twin in kernels/src, for test_twins.py's cases, and gives the same cycles and bits on the RTL.

One difference is known: a block-dimension PSUM tensor allocated in a loop ([NB, 128, 512]: NB
banks) rotates over its buffers as one group, NB banks per buffer; today's list of NB PSUM tiles
(a PSUM tile is at most one bank in NKI 0.7) rotates each tile over buffers of its own. Where the
loop runs more than once and NB > 1 (conv_pool's weight transposes; matrix_transpose of more than
4 x 128 rows), the Program is the same but for the PSUM bank numbers, and here the same cycles."""
import numpy as np
import pytest

import ncore
from today import conv2d, kernels, matrix
from twin_cases import CASES, IDS, case_named, kernel_of, placement_free, programs, same_cycles_and_bits

MODULES = (kernels, matrix, conv2d)

# the cases whose PSUM tiles are placed apart (see above): the list of PSUM tiles in the loop
PSUM_PLACED = {"conv_pool": "conv2d.py's w_ps: 3 banks, 2 iterations of the loop over 128 input channels"}


@pytest.mark.parametrize("dt", ["fp32", "fp16"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_program_as_the_cpp_twin(case, dt):
    py, cc = programs(MODULES, case, dt)
    if case[0] in PSUM_PLACED:
        assert py.code() != cc.code()
        assert placement_free(py) == placement_free(cc)
    else:
        assert py.code() == cc.code()


@pytest.mark.parametrize("shape", [(1024, 512), (1024, 1024)])
def test_a_list_of_psum_tiles_in_a_loop_is_placed_tile_by_tile(shape):
    # 8 row blocks per group: 2 PSUM banks per block column, 4 block columns (the loop's 4 buffers)
    py = ncore.trace(kernels.matrix_transpose, np.zeros(shape, np.float32))
    cc = ncore.declared("transpose", n=shape[0], m=shape[1])
    assert py.code() != cc.code()
    assert placement_free(py) == placement_free(cc)


RTL_CASES = ["tiled", "stream", "direct_alloc", "load_store", "transpose", "matmul", "conv_pool", "conv_pool_floor"]


@pytest.mark.parametrize("name", RTL_CASES)
def test_same_cycles_and_bits_on_the_rtl(name):
    same_cycles_and_bits(kernel_of(MODULES, case_named(name)[1]), name)
