"""The CUDA target: devices and transfers (SPEC §4), and what only this target has
(its two reduction skeletons, gathers and scatters, the buffer pool).

Runs where the 'cuda' device is available: a GPU, or Numba's simulator
(``NUMBA_ENABLE_CUDASIM=1``, as `.ci/run` does; tiny shapes, since it runs each CUDA
thread as a Python thread). The op and autograd tests run on this target too, with
``NUMGRAD_TEST_DEVICE=cuda``. Values are checked against NumPy to float64 rtol 1e-12
(reductions sum in another order than NumPy: rtol 1e-12 still holds at these sizes).
"""

import os

import numpy as np
import pytest

import numgrad as ng

pytestmark = pytest.mark.skipif(not ng.cuda.is_available(),
                                reason="needs a CUDA GPU or NUMBA_ENABLE_CUDASIM=1")

RTOL = 1e-12


@pytest.fixture
def backend():
    from numgrad.kernels import cuda

    return cuda


@pytest.fixture
def launches():
    """The launch configuration (threads per block)."""
    from numgrad.kernels.cuda import grid

    return grid


def rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


# ---- devices and transfers ---------------------------------------------------------

def test_mixing_devices_raises_naming_both():
    x = ng.tensor([1.0, 2.0], device="cpu")
    y = ng.tensor([1.0, 2.0], device="cuda")
    with ng.engine.record() as rec:
        for op in (lambda: x + y, lambda: y * x, lambda: ng.where(x > 0, x, y),
                   lambda: x @ y):
            with pytest.raises(RuntimeError, match="'cpu' and 'cuda'|'cuda' and 'cpu'"):
                op()
    assert rec.kernels_launched == 0  # raised before any kernel (and nothing was copied)
    assert (x + 1).device == "cpu" and (y + 1).device == "cuda"  # scalars mix with any


def test_seeds_and_grads_must_be_on_their_tensors_device():
    x = ng.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="gradient 0 is on device 'cpu'.*'cuda'"):
        y.backward(ng.ones(2, device="cpu"))
    with pytest.raises(RuntimeError, match="grad is on 'cpu'; expected 'cuda'"):
        x.grad = ng.zeros(2, device="cpu")


def test_to_and_back_keeps_values_and_dtypes():
    a = rand((3, 4)).astype(np.float32)
    x = ng.tensor(a)
    c = x.cuda()
    assert c.device == "cuda" and c.dtype == np.float32
    assert c.to("cuda") is c
    back = c.cpu()
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), a)
    np.testing.assert_array_equal(ng.tensor(c, device="cpu").numpy(), a)
    np.testing.assert_array_equal(c.to("cpu", dtype=np.float64).numpy(), a.astype(np.float64))


def test_arrays_of_any_layout_go_to_the_device():
    # a[:, None] is contiguous to NumPy with a stride of 0 on its new axis: Numba's copy
    # to the device refused it ("could not broadcast (6,) into (6,1)").
    a = rand((6,))
    for host in (a[:, None], a[None, :], a[::2, None], rand((3, 4)).T, np.float64(2.5) * a[:1]):
        np.testing.assert_array_equal(ng.tensor(host, device="cuda").numpy(), host)


def test_to_is_differentiable_and_grads_live_on_their_device():
    a = rand((2, 3))
    x = ng.tensor(a, device="cpu", requires_grad=True)
    w = ng.tensor(rand((2, 3), 1), device="cuda", requires_grad=True)
    loss = (x.to("cuda").exp() * w).sum()
    loss.backward()
    assert x.grad.device == "cpu" and w.grad.device == "cuda"
    np.testing.assert_allclose(x.grad.numpy(), np.exp(a) * rand((2, 3), 1), rtol=RTOL)
    np.testing.assert_allclose(w.grad.numpy(), np.exp(a), rtol=RTOL)
    # and higher order through the copy
    x.grad = None
    (g,) = ng.grad((x.cuda() ** 3).sum(), x, create_graph=True)
    (gg,) = ng.grad(g.sum(), x)
    assert gg.device == "cpu"
    np.testing.assert_allclose(gg.numpy(), 6 * a, rtol=RTOL)


def test_default_device_applies_to_every_creation_function():
    with ng.default_device("cuda"):
        made = [ng.tensor([1.0]), ng.zeros(2), ng.ones(2), ng.full((2,), 3.0), ng.arange(3),
                ng.linspace(0, 1, 3), ng.eye(2), ng.empty(2), ng.from_numpy(np.ones(2))]
        assert all(t.device == "cuda" for t in made)
    assert ng.zeros(1).device == ng.get_default_device()


# ---- kernels only this target has ---------------------------------------------------

REDUCTIONS = [("sum", np.sum), ("prod", np.prod), ("max", np.max), ("min", np.min)]


@pytest.mark.parametrize("skeleton", ["rows", "blocks"])
@pytest.mark.parametrize("name,ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
def test_both_reduction_skeletons_match_numpy(backend, launches, monkeypatch, skeleton, name,
                                              ref, axis):
    # Small blocks, so that a few hundred elements take several blocks per output
    # (exercising partial results, the last-block combine and the counter reset).
    monkeypatch.setattr(launches, "MAX_THREADS", 8)
    if skeleton == "rows":
        monkeypatch.setattr(backend, "ROWS_THRESHOLD", 1)
    else:
        monkeypatch.setattr(backend, "SMALL_ROW", 1)
    a = rand((4, 5, 6)) * 0.9 + 1.2  # products stay moderate
    x = ng.tensor(a, device="cuda")
    for _ in range(2):  # a second launch finds the counters reset
        got = (getattr(x.exp(), name)(axis=axis) * 2 + 1).numpy()  # producer + epilogue
        np.testing.assert_allclose(got, ref(np.exp(a), axis=axis) * 2 + 1, rtol=RTOL)


def test_a_block_reduction_with_stores_and_an_epilogue(launches, monkeypatch):
    # W1's shape: the gradient is stored by the same kernel that folds the sum.
    monkeypatch.setattr(launches, "MAX_THREADS", 8)
    a = rand(500)
    x = ng.tensor(a, device="cuda", requires_grad=True)
    y = (x.tanh() ** 2).sum()
    y.backward()
    np.testing.assert_allclose(y.item(), np.sum(np.tanh(a) ** 2), rtol=RTOL)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.tanh(a) * (1 - np.tanh(a) ** 2),
                               rtol=RTOL)


def test_bool_and_integer_reductions():
    a = np.arange(-6, 6).reshape(3, 4)
    x = ng.tensor(a, device="cuda")
    np.testing.assert_array_equal((x > 0).any(axis=1).numpy(), (a > 0).any(axis=1))
    np.testing.assert_array_equal((x > -7).all().numpy(), True)
    np.testing.assert_array_equal(x.max(axis=0).numpy(), a.max(axis=0))
    np.testing.assert_array_equal(x.sum(axis=1).numpy(), a.sum(axis=1))


@pytest.mark.parametrize("key", [
    (np.array([2, 0, 2]),), (slice(None), np.array([1, 1, 0])),
    (np.array([[0], [2]]), np.array([1, 3])), (np.array([True, False, True]),),
    (slice(None, None, -1), 1), (None, Ellipsis, slice(1, 3)),
], ids=["rows", "columns-repeated", "broadcast", "mask", "reversed", "basic"])
def test_gathers_and_scatter_adds(key):
    a = rand((3, 4))
    x = ng.tensor(a, device="cuda", requires_grad=True)
    w = rand(a[key].shape, 1)
    (x[key] * ng.tensor(w, device="cuda")).sum().backward()
    np.testing.assert_array_equal(x[key].numpy(), a[key])
    want = np.zeros_like(a)
    np.add.at(want, key, w)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=RTOL)


def test_index_put_last_value_wins_and_copies():
    a = np.arange(6.0)
    x = ng.tensor(a, device="cuda")
    y = x.index_put(np.array([1, 4, 1]), ng.tensor([7.0, 8.0, 9.0], device="cuda"))
    want = a.copy()
    want[np.array([1, 4, 1])] = [7.0, 8.0, 9.0]
    np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(x.numpy(), a)  # buffers are immutable


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_matmul_dtypes_layouts_and_batches(dtype):
    a = (rand((2, 3, 5)) * 3).astype(dtype)
    b = (rand((5, 4), 1) * 3).astype(dtype)
    x, y = ng.tensor(a, device="cuda"), ng.tensor(b, device="cuda")
    rtol = 1e-6 if dtype == np.float32 else RTOL
    np.testing.assert_allclose((x @ y).numpy(), a @ b, rtol=rtol)
    np.testing.assert_allclose((y.T @ x.swapaxes(1, 2)).numpy(), b.T @ a.swapaxes(1, 2),
                               rtol=rtol)
    assert (x @ y).dtype == (a @ b).dtype


def test_matmul_with_an_empty_inner_dimension_is_zeros():
    x, y = ng.zeros((2, 0), device="cuda"), ng.zeros((0, 3), device="cuda")
    np.testing.assert_array_equal((x + 0) @ (y + 0), np.zeros((2, 3)))


# ---- memory ------------------------------------------------------------------------

def test_a_training_loop_reuses_pooled_buffers():
    rng = np.random.default_rng(0)
    x = ng.tensor(rng.standard_normal((8, 4)), device="cuda")
    target = ng.tensor(rng.integers(0, 3, 8), device="cuda")
    w1 = ng.tensor(rng.standard_normal((4, 6)), device="cuda", requires_grad=True)
    w2 = ng.tensor(rng.standard_normal((6, 3)), device="cuda", requires_grad=True)
    opt = ng.optim.Adam([w1, w2], lr=1e-2)

    def step():
        opt.zero_grad()
        loss = ng.nn.functional.cross_entropy((x @ w1).relu() @ w2, target)
        loss.backward()
        opt.step()
        return loss.item()

    losses = [step() for _ in range(3)]
    before = ng.cuda.memory_stats()["allocations"]
    losses += [step() for _ in range(3)]
    assert ng.cuda.memory_stats()["allocations"] == before  # no new device memory
    assert losses[-1] < losses[0]
    assert w1.grad.device == "cuda"
    assert all(v.device == "cuda" for state in opt.state for v in state.values()
               if isinstance(v, ng.Tensor))


def test_empty_cache_releases_the_free_blocks():
    ng.tensor(np.ones(1000), device="cuda").realize()  # freed at once: back in the pool
    ng.cuda.empty_cache()
    before = ng.cuda.memory_stats()
    ng.tensor(np.ones(1000), device="cuda").realize()
    assert ng.cuda.memory_stats()["allocations"] == before["allocations"] + 1


def test_kernels_are_cached_per_target():
    a = rand(5)
    with ng.engine.record() as first:
        ((ng.tensor(a, device="cuda") * 3.5).sin()).numpy()
    with ng.engine.record() as second:
        ((ng.tensor(a, device="cuda") * 1.5).sin()).numpy()
    assert first.kernels_launched == second.kernels_launched == 1
    assert second.kernels_compiled == 0
    assert "cuda.grid" in ng.explain(ng.tensor(a, device="cuda").sin() * 2)
    assert "cuda.grid" not in ng.explain(ng.tensor(a, device="cpu").sin() * 2)


def test_synchronize_and_device_name():
    import numba
    from numba import cuda

    ng.cuda.synchronize()
    if numba.config.ENABLE_CUDASIM:
        assert ng.cuda.device_name() == "Numba's CUDA simulator (kernels run on the CPU)"
    else:  # the GPU's own name, as text (numba-cuda gives bytes in older releases)
        gpu = cuda.get_current_device().name
        assert ng.cuda.device_name() == (gpu.decode() if isinstance(gpu, bytes) else gpu)


def test_launches_are_logged_only_when_the_kernel_log_is_set(launches):
    # NUMGRAD_CUDA_KERNEL_LOG is read once, at import: unset, a launch is the bare call.
    from numgrad.kernels.cuda import ptx

    assert ptx.LOG == (os.environ.get("NUMGRAD_CUDA_KERNEL_LOG") or None)
    assert (launches.start is launches._start) == (ptx.LOG is None)


def test_a_jitted_training_step_on_cuda_equals_eager_steps():
    rng = np.random.default_rng(1)
    x = ng.tensor(rng.standard_normal((4, 3)), device="cuda")
    start = rng.standard_normal((3, 2))

    def trainer():
        w = ng.tensor(start, device="cuda", requires_grad=True)
        opt = ng.optim.SGD([w], lr=0.1, momentum=0.9)

        def step(x):
            opt.zero_grad()
            loss = ((x @ w).tanh() ** 2).sum()
            loss.backward()
            opt.step()
            return loss

        return w, step

    w_eager, eager = trainer()
    w_jit, step = trainer()
    step = ng.jit(step)
    for _ in range(4):
        np.testing.assert_allclose(step(x).item(), eager(x).item(), rtol=RTOL)
    np.testing.assert_allclose(w_jit.numpy(), w_eager.numpy(), rtol=RTOL)
    assert step.traces == 2 and w_jit.device == "cuda"


def test_a_stencil_sweep_reads_its_input_rolled_on_the_device():
    a = rand((4, 5))
    x = ng.tensor(a, device="cuda").realize()

    def sweep(xp, u):
        return u + 0.2 * (xp.roll(u, 1, 0) + xp.roll(u, -2, 1) - 2 * u)
    sweep(ng, x).numpy()  # compile
    with ng.engine.record() as rec:
        got = sweep(ng, x).numpy()
    assert rec.kernels_launched == 1
    np.testing.assert_allclose(got, sweep(np, a), rtol=RTOL)
