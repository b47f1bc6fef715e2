"""Working with other libraries (SPEC §8): pickling by value, DLPack and the CUDA array
interface. PyTorch and JAX are never installed for the tests; where a developer has
them, the round trips with them run too (the skipped tests say which did not)."""

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numgrad as ng

DTYPES = ["float32", "float64", "int32", "int64", "uint8", "uint64", "bool"]
rng = np.random.default_rng(3)


def _data(dtype):
    values = rng.standard_normal((2, 3)) * 3
    return (abs(values) if dtype.startswith("uint") else values).astype(dtype)


def _address(t) -> int:
    return np.from_dlpack(t).__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_pickle_round_trips_value_dtype_device(dtype):
    t = ng.tensor(_data(dtype))
    u = pickle.loads(pickle.dumps(t))
    assert type(u) is ng.Tensor and u.dtype == t.dtype and u.device == t.device
    np.testing.assert_array_equal(u.numpy(), t.numpy())


def test_pickle_keeps_requires_grad_but_not_history():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    u, v = pickle.loads(pickle.dumps((x, y)))
    assert u.requires_grad and u.is_leaf and u.grad is None
    assert v.requires_grad and v.is_leaf  # the value, not the graph that made it
    (v * v).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [6.0, 12.0])
    assert x.grad is None


def test_pickle_of_a_pending_value_computes_it_once():
    x = ng.tensor(rng.standard_normal(5))
    y = (x * 2).exp()
    np.testing.assert_allclose(pickle.loads(pickle.dumps(y)).numpy(), np.exp(2 * x.numpy()),
                               rtol=1e-12)


def test_unpickling_a_cuda_tensor_without_a_gpu_names_the_device(tmp_path):
    # Pickled under Numba's CUDA simulator, unpickled in a process without it.
    path = tmp_path / "t.pkl"
    code = f"""
        import pickle, numgrad as ng
        pickle.dump(ng.tensor([1.0, 2.0], device="cuda"), open({str(path)!r}, "wb"))
    """
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, check=True,
                   timeout=300)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    load = f"import pickle; pickle.load(open({str(path)!r}, 'rb'))"
    result = subprocess.run([sys.executable, "-c", load], env=env, capture_output=True,
                            text=True, timeout=300)
    if "no CUDA GPU" not in result.stderr and result.returncode == 0:
        pytest.skip("this machine has a CUDA GPU: the tensor unpickled there")
    assert result.returncode != 0
    assert "RuntimeError: the 'cuda' device is not available" in result.stderr


def test_numpy_reads_a_cpu_tensor_without_a_copy():
    if ng.get_default_device() != "cpu":
        pytest.skip("CPU tensors only: NumPy cannot read device memory")
    t = (ng.tensor(rng.standard_normal((3, 4))) * 2).realize()
    a, b = np.from_dlpack(t), np.from_dlpack(t)
    assert t.__dlpack_device__() == (1, 0)
    assert _address(t) == a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    np.testing.assert_array_equal(a, t.numpy())


def test_a_broadcast_constant_exports_its_values():
    t = ng.full((2, 3), 1.5, device="cpu").realize()  # one element read with stride 0
    np.testing.assert_array_equal(np.from_dlpack(t), np.full((2, 3), 1.5))


def test_from_dlpack_shares_numpy_memory_and_never_writes_it():
    a = rng.standard_normal((3, 4))
    before = a.copy()
    t = ng.from_dlpack(a)
    assert np.shares_memory(np.from_dlpack(t), a)
    y = ((t * 2).exp() + t).sum(axis=0)
    t += 1  # rebinding: a new value for t, a's memory untouched
    np.testing.assert_allclose(y.numpy(), (np.exp(2 * before) + before).sum(0), rtol=1e-12)
    np.testing.assert_array_equal(a, before)


def test_from_dlpack_of_views_and_all_dtypes():
    for dtype in DTYPES:
        a = _data(dtype)
        np.testing.assert_array_equal(ng.from_dlpack(a).numpy(), a)
    a = rng.standard_normal((4, 6))[::2, 1::2]  # strided: still no copy
    t = ng.from_dlpack(a)
    assert np.shares_memory(np.from_dlpack(t), a)
    np.testing.assert_allclose((t * 3).numpy(), a * 3, rtol=1e-12)


def test_from_dlpack_rejects_what_numgrad_cannot_hold():
    with pytest.raises(TypeError, match="numgrad has no dtype float16"):
        ng.from_dlpack(np.arange(3, dtype=np.float16))
    with pytest.raises(TypeError, match="needs an object with __dlpack__ or "
                                        "__cuda_array_interface__, got list"):
        ng.from_dlpack([1.0, 2.0])


def test_cpu_tensors_have_no_cuda_array_interface():
    assert not hasattr(ng.tensor([1.0], device="cpu"), "__cuda_array_interface__")


def test_torch_shares_memory_both_ways():
    torch = pytest.importorskip("torch")
    t = (ng.tensor(rng.standard_normal(5), device="cpu") + 1).realize()
    p = torch.from_dlpack(t)
    assert p.data_ptr() == _address(t)
    q = torch.arange(4.0)
    u = ng.from_dlpack(q)
    assert _address(u) == q.data_ptr()
    np.testing.assert_array_equal((u * 2).numpy(), [0.0, 2.0, 4.0, 6.0])


def test_jax_shares_memory_both_ways():
    jnp = pytest.importorskip("jax.numpy")
    import jax

    t = (ng.tensor(rng.standard_normal(5), device="cpu") + 1).realize()
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(t)), t.numpy())
    u = ng.from_dlpack(jnp.arange(4.0))
    np.testing.assert_array_equal((u * 2).numpy(), [0.0, 2.0, 4.0, 6.0])


def test_from_dlpack_keeps_a_numba_device_array_on_the_device():
    if ng.get_default_device() != "cuda":
        pytest.skip("needs the cuda device (a GPU, or NUMGRAD_TEST_DEVICE=cuda in the simulator)")
    from numba import cuda

    a = np.arange(6.0).reshape(2, 3)
    d = cuda.to_device(a)
    with ng.engine.record() as rec:
        t = ng.from_dlpack(d)
    assert t.device == "cuda" and rec.bytes_allocated == 0
    np.testing.assert_array_equal((t * 2).numpy(), a * 2)
    np.testing.assert_array_equal(d.copy_to_host(), a)  # numgrad did not write it


def test_tensor_copies_a_numba_device_array_on_the_device():
    if ng.get_default_device() != "cuda":
        pytest.skip("needs the cuda device (a GPU, or NUMGRAD_TEST_DEVICE=cuda in the simulator)")
    from numba import cuda

    a = np.arange(6.0).reshape(2, 3)
    d = cuda.to_device(a)
    t = ng.tensor(d, dtype="float32")
    assert t.device == "cuda" and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), a)
    d.copy_to_device(np.zeros_like(a))  # the tensor has its own copy
    np.testing.assert_array_equal(t.numpy(), a)
