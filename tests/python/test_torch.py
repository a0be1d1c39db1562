"""torch CPU tensors as kernel arguments: the framework is inferred from the arguments, and the
results come back as torch tensors of the kernel's dtypes; bfloat16 tensors (which NumPy cannot
hold) pass as their bit patterns and come back exact. References are computed by torch itself."""
import numpy as np
import pytest
import torch

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_bf16(a_t, b):
    """out[M, N] = a_t.T @ b in float32 on the tensor engine, rounded to bfloat16."""
    _, m = a_t.shape
    _, n = b.shape
    out = nl.ndarray((m, n), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    ps = nl.matmul(nl.load(a_t), nl.load(b), transpose_x=True)
    nl.store(out, nl.copy(ps, dtype=nl.bfloat16))
    return out


@nki.jit
def add_one(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.add(nl.load(x), 1.0))
    return out


@nki.jit
def scale_into(x, out):
    nl.store(out, nl.multiply(nl.load(x), 2.0))


@pytest.mark.parametrize("backend", ["rtl", "golden"])
def test_bfloat16_matmul_from_torch(backend):
    import ncore
    ncore.set_options(backend=backend)
    g = torch.Generator().manual_seed(7)
    a = torch.randn(128, 64, generator=g).to(torch.bfloat16)
    b = torch.randn(128, 96, generator=g).to(torch.bfloat16)
    r = matmul_bf16(a, b)
    assert isinstance(r, torch.Tensor) and r.dtype == torch.bfloat16 and tuple(r.shape) == (64, 96)
    # products of bfloat16 values are exact in float32; the sum's order may differ from torch's, so
    # the result may differ from torch's in the last bit of a bfloat16 only
    ref = (a.float().T @ b.float()).to(torch.bfloat16)
    ulp = (ref.float().abs() * 2.0 ** -7).clamp(min=2.0 ** -126)
    assert torch.all((r.float() - ref.float()).abs() <= ulp)


def test_bfloat16_input_bits_unchanged():
    x = torch.tensor([[1.0, -2.5, 3.140625, 65280.0]] * 128, dtype=torch.bfloat16)
    r = add_one(x)
    assert r.dtype == torch.bfloat16
    assert torch.equal(r, (x.float() + 1.0).to(torch.bfloat16))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_torch_dtypes_round_trip(dtype):
    x = (torch.arange(128 * 8).reshape(128, 8) % 50).to(dtype)
    r = add_one(x)
    assert isinstance(r, torch.Tensor) and r.dtype == dtype
    assert torch.equal(r, x + 1)


def test_numpy_arguments_still_give_numpy():
    x = np.ones((128, 4), np.float32)
    r = add_one(x)
    assert isinstance(r, np.ndarray) and np.array_equal(r, x + 1)


def test_output_argument_written_back_into_the_torch_tensor():
    x = torch.rand(128, 16)
    out = torch.zeros(128, 16)
    scale_into(x, out)
    assert torch.equal(out, x * 2)


def test_unsupported_torch_dtype_is_refused_by_name():
    with pytest.raises(ValueError, match=r"argument 'x' is a torch tensor of torch.float64: .* \(pass x.float\(\)\)"):
        add_one(torch.zeros(128, 4, dtype=torch.float64))
