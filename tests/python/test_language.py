"""The language as NKI defines it, each feature on a small kernel against NumPy (on the golden
model unless a test says otherwise; its results are the RTL's bit for bit)."""
import json

import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return rng.uniform(-2, 2, size=shape).astype(dtype)


def sim(kernel, *args, **kwargs):
    return nki.simulate_kernel(kernel, *args, **kwargs)


def test_load_store_add_and_operators():
    @nki.jit
    def k(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        y = nl.load(b)
        nl.store(out, value=(x + y) * y - x)
        return out

    a, b = rand(128, 64), rand(128, 64)
    got = sim(k, a, b)
    want = ((a + b) * b) - a
    np.testing.assert_array_equal(got, want)


def test_tensor_scalar_broadcast_and_reverse():
    @nki.jit
    def k(a, s):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        v = nl.load(s)  # (128, 1): one value per partition
        r = nisa.tensor_scalar(x, nl.multiply, v, op1=nl.subtract, operand1=3.0, reverse1=True)
        nl.store(out, value=nl.maximum(r, 0.5) - 1.0)
        return out

    a, s = rand(128, 32), rand(128, 1)
    got = sim(k, a, s)
    want = np.maximum(np.float32(3.0) - a * s, np.float32(0.5)) - np.float32(1.0)
    np.testing.assert_array_equal(got, want)


def test_indexing_slices_steps_ellipsis_and_reshape():
    @nki.jit
    def k(a):
        # a: (4, 128, 64); out (128, 2, 16): rows of a[1], every other column from 8, then reshape
        out = nl.ndarray((128, 2, 16), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a[1, :, 1:64:2])          # (128, 32)
        u = nl.ndarray((128, 2, 16), dtype=a.dtype, buffer=nl.sbuf)
        u[...] = nisa.tensor_copy(t.reshape((128, 2, 16)))
        nl.store(out[...], value=u)
        return out

    a = rand(4, 128, 64)
    got = sim(k, a)
    np.testing.assert_array_equal(got, a[1, :, 1:64:2].reshape(128, 2, 16))


def test_negative_indices_and_ds():
    @nki.jit
    def k(a):
        out = nl.ndarray((64, 16), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a[-64:, nl.ds(16, 16)])
        nl.store(out, value=t)
        return out

    a = rand(128, 48)
    np.testing.assert_array_equal(sim(k, a), a[-64:, 16:32])


def test_arange_and_mgrid_indices():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(256)[None, :]
        for m in nl.affine_range(2):
            t = nl.load(a[i_p, m * 256 + i_f])
            ix, iy = nl.mgrid[0:128, 0:128]
            nl.store(out[ix, m * 128 + iy], value=t[ix, iy * 2])
        return out

    a = rand(128, 512)
    want = np.concatenate([a[:, 0:256:2], a[:, 256:512:2]], axis=1)
    np.testing.assert_array_equal(sim(k, a), want)


def test_multidimensional_tiles():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 2, 2, 3, 3), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 2, 2, 3, 3), dtype=a.dtype, buffer=nl.sbuf)
        t[...] = nl.load(a)
        nl.store(out, value=nl.multiply(t, 2.0))
        return out

    a = rand(128, 2, 2, 3, 3)
    np.testing.assert_array_equal(sim(k, a), a * np.float32(2))


def test_six_dimensional_sbuf_tensor():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 2, 2, 3, 3), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 128, 2, 2, 3, 3), dtype=a.dtype, buffer=nl.sbuf)
        t[:, 5] = nl.load(a)
        nl.store(out, value=t[:, 5])
        return out

    a = rand(128, 2, 2, 3, 3)
    np.testing.assert_array_equal(sim(k, a), a)


def test_zeros_full_memset_and_reductions():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 4), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)                                     # (128, 3, 10)
        r = nl.ndarray((128, 4), dtype=a.dtype, buffer=nl.sbuf)
        r[:, 0:1] = nl.zeros((128, 1), dtype=a.dtype)
        r[:, 1:2] = nisa.tensor_reduce(nl.max, t, axis=(1, 2))
        r[:, 2:3] = nl.sum(t, axis=[1, 2])
        r[:, 3:4] = nisa.memset((128, 1), 7.5, a.dtype)
        nl.store(out, value=r)
        return out

    a = rand(128, 3, 10)
    got = sim(k, a)
    assert np.all(got[:, 0] == 0)
    np.testing.assert_array_equal(got[:, 1], a.reshape(128, 30).max(axis=1))
    np.testing.assert_allclose(got[:, 2], a.reshape(128, 30).sum(axis=1), rtol=1e-5, atol=1e-5)
    assert np.all(got[:, 3] == 7.5)


def test_tensor_reduce_keepdims_shape():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 3, 1), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        m = nisa.tensor_reduce(nl.maximum, t, axis=2, keepdims=True)
        assert m.shape == (128, 3, 1)
        nl.store(out, value=m)
        return out

    a = rand(128, 3, 10)
    np.testing.assert_array_equal(sim(k, a), a.max(axis=2, keepdims=True))


def test_activation_bias_scale_and_reduce():
    @nki.jit
    def k(a, b):
        out = nl.ndarray((128, 65), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        bias = nl.load(b)
        res = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        y = nisa.activation_reduce(nl.relu, x, reduce_op=nl.add, reduce_res=res, bias=bias, scale=0.5)
        o = nl.ndarray((128, 65), dtype=a.dtype, buffer=nl.sbuf)
        o[:, 0:64] = nisa.tensor_copy(y)
        o[:, 64:65] = nisa.tensor_copy(res)
        nl.store(out, value=o)
        return out

    a, b = rand(128, 64), rand(128, 1)
    got = sim(k, a, b)
    y = np.maximum(a * np.float32(0.5) + b, 0)
    np.testing.assert_array_equal(got[:, :64], y)
    np.testing.assert_allclose(got[:, 64], y.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_dtype_casts_and_float16():
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=nl.float16, buffer=nl.shared_hbm)
        t = nl.load(a)
        h = nisa.tensor_copy(t, dtype=nl.float16)
        nl.store(out, value=h)
        return out

    a = rand(128, 16)
    got = sim(k, a)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, a.astype(np.float16))


def test_matmul_accumulates_into_psum():
    @nki.jit
    def k(lhsT, rhs):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        ps = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
        for kt in nl.affine_range(2):
            l = nl.load(lhsT[kt * 128:(kt + 1) * 128, :])
            r = nl.load(rhs[kt * 128:(kt + 1) * 128, :])
            ps += nisa.nc_matmul(l, r)
        nl.store(out, value=nl.copy(ps))
        return out

    lhsT, rhs = rand(256, 128), rand(256, 512)
    got = sim(k, lhsT, rhs)
    np.testing.assert_allclose(got, lhsT.T.astype(np.float64) @ rhs, rtol=1e-4, atol=1e-4)


def test_nl_matmul_and_transpose():
    @nki.jit
    def k(x, y):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        outT = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        xt = nl.load(x)
        p = nl.matmul(xt, nl.load(y), transpose_x=True)  # x given as [K, M]
        nl.store(out, value=nl.copy(p))
        q = nl.matmul(nl.load(x[0:64, :]), nl.load(y))    # x [M, K]: transposed on the tensor engine
        nl.store(out2, value=nl.copy(q))
        t = nl.transpose(nl.load(x[:, 0:64]))
        nl.store(outT, value=nl.copy(t))
        return out, out2, outT

    x, y = rand(128, 128), rand(128, 512)
    got, got2, gotT = sim(k, x, y)
    np.testing.assert_allclose(got, x.T.astype(np.float64) @ y, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got2, x[0:64].astype(np.float64) @ y, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(gotT, x[:, 0:64].T)


def test_loops_sequential_static_and_plain_range():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 8), dtype=a.dtype, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 8), dtype=nl.float32)
        for i in nl.sequential_range(3):
            acc[...] = nl.add(acc, nl.load(a[i]))
        for j in nl.static_range(1):
            acc[...] = acc * 2.0
        nl.store(out, value=acc)
        return out

    a = rand(3, 128, 8)
    np.testing.assert_allclose(sim(k, a), (a[0] + a[1] + a[2]) * 2, rtol=1e-6)


def test_output_argument_written_in_place_and_returned_tuple():
    @nki.jit
    def k(a, result):
        t = nl.load(a)
        nl.store(result, value=t * 3.0)

    a = rand(128, 16)
    result = np.zeros((128, 16), np.float32)
    assert nki.simulate_kernel(k, a, result) is None
    np.testing.assert_array_equal(result, a * np.float32(3))


def test_baremetal_on_the_rtl_equals_simulate_kernel():
    from kernels import vector_add_stream
    a, b = rand(25600), rand(25600)
    on_rtl = nki.baremetal(vector_add_stream)(a, b)
    stats = ncore.last_run()
    assert stats["backend"] == "rtl" and stats["cycles"] > 0
    golden = nki.simulate_kernel(vector_add_stream, a, b)
    assert ncore.last_run()["cycles"] is None
    np.testing.assert_array_equal(on_rtl, golden)
    np.testing.assert_array_equal(on_rtl, a + b)


def test_check_mode_from_options():
    from kernels import vector_add_tiled
    ncore.set_options(check=True)
    a, b = rand(256), rand(256)
    out = nki.baremetal(vector_add_tiled)(a, b)
    np.testing.assert_array_equal(out, a + b)
    s = ncore.last_run()
    assert s["checked_instructions"] > 0


def test_options_validated(monkeypatch):
    with pytest.raises(ValueError, match="backend"):
        ncore.set_options(backend="fpga")
    monkeypatch.setenv("NCORE_CONFIG", "trn9")
    with pytest.raises(ValueError, match="NCORE_CONFIG"):
        ncore.options()


def test_waveforms_of_a_python_run_limited_to_scopes_and_a_window(tmp_path):
    import shutil
    import subprocess
    from kernels import vector_add_stream
    a, b = rand(25600), rand(25600)
    nki.baremetal(vector_add_stream)(a, b)
    w0 = ncore.last_run()["cycles"] - 2000  # 800 cycles of the kernel's last stretch
    fst = tmp_path / "run.fst"
    ncore.set_options(waves=str(fst), waves_scope="dve,seq", waves_window=f"{w0}:{w0 + 800}")
    np.testing.assert_array_equal(nki.baremetal(vector_add_stream)(a, b), a + b)
    assert fst.stat().st_size > 0
    if shutil.which("fst2vcd"):
        vcd = subprocess.run(["fst2vcd", str(fst)], capture_output=True, text=True, check=True).stdout
        scopes = {line.split()[2] for line in vcd.splitlines() if line.startswith("$scope")}
        assert "u_dve" in scopes and "u_pe" not in scopes and "u_dma" not in scopes
        # the header's time 0 aside, every time in the window (416.7 ps a cycle at 2.4 GHz)
        times = [int(line[1:]) for line in vcd.splitlines() if line.startswith("#") and line != "#0"]
        assert len(times) > 5, len(times)
        assert w0 * 1e6 / 2400 - 1 <= min(times) and max(times) <= (w0 + 800) * 1e6 / 2400 + 1
    ncore.set_options(waves_scope="fpu")
    with pytest.raises(ValueError, match=r"NCORE_WAVES_SCOPE \(waves_scope=\) fpu: unknown scope \(known: seq, dve"):
        nki.baremetal(vector_add_stream)(a, b)
    ncore.set_options(waves=None, waves_scope="dve", waves_window=None)
    with pytest.raises(ValueError, match=r"need NCORE_WAVES"):
        nki.baremetal(vector_add_stream)(a, b)


def test_benchmark_both_forms_latency_and_profile(tmp_path):
    from kernels import vector_add_stream
    a, b = rand(25600), rand(25600)
    trace = tmp_path / "prof.ntff"
    neff = tmp_path / "file.neff"
    bench = nki.benchmark(warmup=2, iters=5, save_neff_name=str(neff), save_trace_name=str(trace))(vector_add_stream)
    out = bench(a, b)
    np.testing.assert_array_equal(out, a + b)
    lat = bench.benchmark_result.nc_latency
    us = ncore.last_run()["time_us"]
    assert us > 0
    assert all(lat.get_latency_percentile(p) == us for p in (0, 1, 10, 25, 50, 90, 99, 100))
    for suffix in ("summary.json", "trace.json", "timeline.html"):
        assert (tmp_path / f"prof.{suffix}").stat().st_size > 0
    # the exact names given hold the Program image and the trace (scripts rename them)
    ncore.trace(vector_add_stream, a, b).save(str(tmp_path / "traced.ncimg"))
    assert neff.read_bytes() == (tmp_path / "traced.ncimg").read_bytes()
    assert json.loads(trace.read_text()) == json.loads((tmp_path / "prof.trace.json").read_text())
    bench2 = nki.benchmark(vector_add_stream, warmup=1, iters=10)
    bench2(a, b)
    assert bench2.benchmark_result.nc_latency.get_latency_percentile(99) == us


def test_engine_ids_are_nkis():
    """nisa's engine constants carry NKI's ids (nki.isa docs: tensor 1, scalar 2, gpsimd 3, dma 4,
    vector 5), taken from the ISA description, so `engine=` and comparisons of them mean what NKI
    means."""
    assert (nisa.unknown_engine, nisa.tensor_engine, nisa.scalar_engine, nisa.gpsimd_engine, nisa.dma_engine,
            nisa.vector_engine) == (0, 1, 2, 3, 4, 5)
    assert nisa.engine.vector == 5 and nisa.engine.scalar == 2 and nisa.engine.gpsimd == 3
    assert nisa.constants.engine.tensor == 1 and nisa.constants.engine.dma == 4
