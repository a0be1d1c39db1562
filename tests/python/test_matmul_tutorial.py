"""The NKI matmul tutorial's four kernels as this project rewrites them
(kernels/python/examples/matmul_tutorial.py, what tools/fidelity times against the tutorial's
table): each result against torch's product of the same bfloat16 inputs within the forward error
bound of its roundings, and each kernel's instruction mix, which is what its timing rests on."""
import pytest
import torch

import ncore

import matmul_tutorial as mt

BF16_U = 2.0 ** -8  # bfloat16's unit roundoff (8 significant bits)
FP32_U = 2.0 ** -24


def operands(m, k, n, seed):
    g = torch.Generator().manual_seed(seed)
    lhs = (torch.rand((m, k), generator=g) - 0.5).to(torch.bfloat16)
    rhs = (torch.rand((k, n), generator=g) - 0.5).to(torch.bfloat16)
    return lhs, rhs


def error_bound(lhs, rhs, k_block):
    """Elementwise, how far the kernel's result may lie from torch's fp32 product: the products
    of bfloat16 values are exact in fp32, both sums are fp32 sums in some order (each at most K
    fp32 roundings relative to the sum of magnitudes), and the kernel rounds its running sum to
    bfloat16 once per block of k_block contraction rows (the whole of K but for the fully
    optimized kernel, whose partial sums live in the SBUF in the result's dtype)."""
    a, b = lhs.double(), rhs.double()
    k = a.shape[1]
    running = torch.zeros((a.shape[0], b.shape[1]), dtype=torch.float64)
    rounding = torch.zeros_like(running)
    for k0 in range(0, k, k_block):
        running += a[:, k0:k0 + k_block] @ b[k0:k0 + k_block]
        rounding += running.abs()
    return BF16_U * rounding + 2 * k * FP32_U * (a.abs() @ b.abs())


def run(kernel, lhs, rhs, **blocks):
    result = torch.full((lhs.shape[0], rhs.shape[1]), float("nan"), dtype=torch.bfloat16)
    kernel(lhs.T, rhs, result, **blocks)
    return result


CASES = [  # kernel, M, K, N, blocks (the fully optimized kernel's TILES_IN_BLOCK_M/N/K)
    ("nki_matmul_tiled_", 128, 128, 512, {}),
    ("nki_matmul_tiled_", 256, 384, 1024, {}),
    ("nki_matmul_hoist_load_", 384, 256, 512, {}),
    ("nki_matmul_hoist_load_", 256, 384, 1024, {}),
    ("nki_matmul_block_free_dimension_", 256, 384, 1024, {}),
    ("nki_matmul_block_free_dimension_", 512, 256, 2048, {}),
    ("nki_matmul_fully_optimized_", 256, 512, 1024, dict(TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=2)),
    ("nki_matmul_fully_optimized_", 512, 384, 512, dict(TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=1, TILES_IN_BLOCK_K=1)),
    ("nki_matmul_fully_optimized_", 2048, 1024, 1024, {}),  # the tutorial's 16/2/8 blocking
]


@pytest.mark.parametrize("name,m,k,n,blocks", CASES)
def test_result_within_the_bfloat16_bound_of_torch(name, m, k, n, blocks):
    ncore.set_options(backend="golden")  # the RTL's bits; the RTL runs them in tools/fidelity
    lhs, rhs = operands(m, k, n, seed=m + k + n)
    got = run(getattr(mt, name), lhs, rhs, **blocks)
    k_block = 128 * blocks.get("TILES_IN_BLOCK_K", 8) if "fully" in name else k
    bound = error_bound(lhs, rhs, k_block)
    assert got.dtype == torch.bfloat16 and not torch.isnan(got.float()).any()
    err = (got.double() - (lhs.float() @ rhs.float()).double()).abs()
    assert torch.all(err <= bound), f"largest excess over the bound {(err - bound).max().item():.3g}"


def test_tiled_on_the_rtl_writes_its_result_argument():
    lhs, rhs = operands(128, 256, 512, seed=3)
    got = run(mt.nki_matmul_tiled_, lhs, rhs)
    assert torch.all((got.double() - (lhs.float() @ rhs.float()).double()).abs() <= error_bound(lhs, rhs, 256))
    assert ncore.last_run()["time_us"] > 0


def tiles(m, k, n):
    return m // 128, k // 128, n // 512


@pytest.mark.parametrize("m,k,n", [(2048, 1024, 1024), (512, 768, 2048)])
def test_instruction_mix(m, k, n):
    # What each step of the tutorial changes: how many loads per multiply. Every kernel does
    # M/128 x N/512 x K/128 multiplies (a load_stationary and a multiply_moving each) and one
    # PSUM-to-SBUF copy per result tile.
    ncore.set_options(config="trn1")
    mtl, ktl, ntl = tiles(m, k, n)
    out_tiles, mults = mtl * ntl, mtl * ntl * ktl
    args = (torch.zeros((k, m), dtype=torch.bfloat16), torch.zeros((k, n), dtype=torch.bfloat16),
            torch.zeros((m, n), dtype=torch.bfloat16))
    loads = {  # the DMA transfers: loads, then one store per result tile (per row of 2 tiles, fully)
        "nki_matmul_tiled_": 2 * mults + out_tiles,
        "nki_matmul_hoist_load_": mtl * ktl + mults + out_tiles,
        "nki_matmul_block_free_dimension_": mtl * ktl + (mtl // 2) * ntl * ktl + out_tiles,
    }
    for name, dma in loads.items():
        c = ncore.trace(getattr(mt, name), *args).opcode_counts()
        assert (c["dma_copy"], c["load_stationary"], c["multiply_moving"], c["tensor_copy"]) == \
            (dma, mults, mults, out_tiles), name
    blocks = dict(TILES_IN_BLOCK_M=4, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=2)
    c = ncore.trace(mt.nki_matmul_fully_optimized_, *args, **blocks).opcode_counts()
    k_blocks, n_blocks, m_blocks = ktl // 2, ntl // 2, mtl // 4
    # per column block and K block: 2 wide rhs loads, then 2 wide lhsT loads per row block; the
    # running sum zeroed per result tile, a PSUM tile added into it per K block; one store per
    # row of result tiles
    assert c["dma_copy"] == n_blocks * k_blocks * (2 + m_blocks * 2) + n_blocks * mtl
    assert (c["load_stationary"], c["multiply_moving"]) == (mults, mults)
    assert (c["memset"], c["tensor_tensor"], c["tensor_copy"]) == (out_tiles, out_tiles * k_blocks, out_tiles)
