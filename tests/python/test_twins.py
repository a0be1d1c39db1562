"""Each NKI Python kernel of kernels/python/examples traces to the same Program as its C++ twin in
kernels/src (same instructions bit for bit, same HBM layout; names and source lines aside), and
gives the same cycles and bits on the RTL. The cases are twin_cases.py's (test_twins_today.py runs
them for today's NKI twins)."""
import pytest

import neuronxcc.nki as nki

import conv2d
import kernels
import matrix
from twin_cases import CASES, IDS, case_named, kernel_of, programs, same_cycles_and_bits

MODULES = (kernels, matrix, conv2d)


@pytest.mark.parametrize("dt", ["fp32", "fp16"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_program_as_the_cpp_twin(case, dt):
    py, cc = programs(MODULES, case, dt)
    assert py.code() == cc.code()


RTL_CASES = ["tiled", "stream", "direct_alloc", "transpose", "matmul", "conv_pool", "conv_pool_floor"]


@pytest.mark.parametrize("name", RTL_CASES)
def test_same_cycles_and_bits_on_the_rtl(name):
    kernel = kernel_of(MODULES, case_named(name)[1])
    same_cycles_and_bits(nki.baremetal(kernel), name)
