"""Processes and resources (SPEC §9): processes sharing one cache folder, unusable cache
folders, impossible allocations, deep graphs.

The cache tests run child processes on the Numba target (they are about its disk
cache), whatever target the suite runs on.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numgrad as ng

PROGRAM = """
    import json, sys, warnings
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        import numpy as np, numgrad as ng
        x = ng.tensor(np.linspace(-1, 1, 7), requires_grad=True)
        with ng.engine.record() as rec:
            loss = ((x * 1.25).tanh() * x + x.exp() / 3).sum()
            loss.backward()
            values = [loss.item(), x.grad.numpy().tolist()]
            # a second program: a second kernel that the cache must find
            values.append((x.detach().sin() @ x.detach()).item())
    print(json.dumps({
        "compiled": rec.kernels_compiled, "disk": rec.disk_hits, "values": values,
        "warnings": [[type(w.message).__name__, str(w.message)] for w in caught],
    }))
"""


def child(cache, *, prefix: tuple[str, ...] = (), code: str = PROGRAM):
    """Start a process running `code` on the Numba target with `cache` as its folder."""
    env = dict(os.environ, NUMGRAD_CACHE_DIR=str(cache), NUMGRAD_CPU_KERNELS="numba")
    return subprocess.Popen([*prefix, sys.executable, "-c", textwrap.dedent(code)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(proc) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow
def test_six_processes_starting_at_once_share_one_fresh_cache_folder(tmp_path, expected):
    procs = [child(tmp_path) for _ in range(6)]
    results = [result(p) for p in procs]
    assert all(r["values"] == expected for r in results)
    assert all(r["warnings"] == [] for r in results)
    compiled = [r["compiled"] for r in results]
    assert sum(compiled) >= 1, compiled
    # What they left is consistent: a new process compiles nothing, and agrees.
    last = result(child(tmp_path))
    assert last["compiled"] == 0 and last["disk"] > 0
    assert last["values"] == results[0]["values"]


def cache_warnings(r: dict) -> list[str]:
    return [message for kind, message in r["warnings"] if kind == "CacheWarning"]


@pytest.fixture(scope="module")
def expected(tmp_path_factory) -> list:
    """The program's values with a usable cache folder."""
    return result(child(tmp_path_factory.mktemp("usable")))["values"]


def drop_file_permission_bypass() -> tuple[str, ...]:
    """A command prefix under which the child cannot write where permissions forbid it
    (root normally can): dropping the capabilities that bypass file permissions."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, and setpriv (util-linux) is missing: a read-only "
                    "folder would still be writable")
    caps = "-dac_override,-dac_read_search"
    prefix = (setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}")
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True)
    if probe.returncode:
        pytest.skip(f"setpriv cannot drop capabilities here: {probe.stderr.strip()}")
    return prefix


CHECK_UNWRITABLE = """
    import os, sys
    folder = os.environ["NUMGRAD_CACHE_DIR"]
    try:
        open(os.path.join(folder, "probe"), "w")
    except PermissionError:
        pass
    else:
        sys.exit("the folder is writable for this process")
"""


@pytest.mark.slow  # (processes from an empty cache, `budget`; in process: the test below)
def test_read_only_cache_folder_means_one_warning_and_working_kernels(tmp_path, expected):
    prefix = drop_file_permission_bypass()
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        check = subprocess.run([*prefix, sys.executable, "-c", textwrap.dedent(CHECK_UNWRITABLE)],
                               env=dict(os.environ, NUMGRAD_CACHE_DIR=str(folder)),
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        r = result(child(folder, prefix=prefix))
    finally:
        folder.chmod(0o755)
    assert r["values"] == expected
    [message] = cache_warnings(r)
    assert str(folder) in message and "not writable" in message
    assert "NUMGRAD_CACHE_DIR" in message and "temporary folder" in message
    assert [kind for kind, _ in r["warnings"]] == ["CacheWarning"]  # no NumbaWarning
    assert list(folder.iterdir()) == []
    private = message.split("temporary folder ")[1].split(" ")[0]
    assert not os.path.exists(private)  # deleted at exit


@pytest.mark.slow  # (processes from an empty cache, `budget`)
@pytest.mark.parametrize("below", [False, True], ids=["a file", "below a file"])
def test_cache_path_that_is_a_file_means_one_warning_and_working_kernels(tmp_path, below,
                                                                        expected):
    path = tmp_path / "not-a-folder"
    path.write_text("a file\n")
    cache = path / "numgrad" if below else path
    r = result(child(cache))
    assert r["values"] == expected
    [message] = cache_warnings(r)
    assert str(cache) in message and "NUMGRAD_CACHE_DIR" in message
    assert ("cannot be created" if below else "is a file") in message
    assert path.read_text() == "a file\n"


def test_unusable_cache_folder_warns_once_in_process(tmp_path, monkeypatch, numba_cpu):
    from numgrad.kernels import cache

    monkeypatch.setattr(cache, "_memory", {})
    monkeypatch.setattr(cache, "_private", None)
    path = tmp_path / "file"
    path.write_text("")
    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(path))
    x = ng.tensor(np.arange(3.0))
    with pytest.warns(cache.CacheWarning, match="is a file") as caught:
        a = (x * 2 + 1).numpy()
        b = (x.exp() - x).sum().item()
    assert len([w for w in caught if w.category is cache.CacheWarning]) == 1
    np.testing.assert_allclose(a, [1, 3, 5])
    assert b == pytest.approx(np.sum(np.exp([0, 1, 2.0]) - [0, 1, 2]))


# ---- impossible allocations ---------------------------------------------------------

#: 8 PB of float64: more than any machine (or any address space) holds.
HUGE = (10**7, 10**8)


def test_impossible_allocation_raises_memory_error_naming_shape_and_dtype():
    big = ng.tensor(np.ones((1, 1))).broadcast_to(HUGE)  # a view: nothing allocated
    y = big * 2 + 1  # recorded: nothing computed yet
    for _ in range(2):  # the value stays pending: asking again raises again
        with pytest.raises(MemoryError, match=r"float64 buffer of shape \(10000000, "
                                              r"100000000\) \(8000000000000000 bytes\)"):
            y.numpy()
    with pytest.raises(MemoryError, match=r"int32 buffer of shape \(10000000, 100000000\)"):
        ng.realize(big.astype(ng.int32) + 1)
    # The engine works on afterwards.
    np.testing.assert_array_equal((ng.tensor([1.0, 2.0]) * 2).numpy(), [2.0, 4.0])


def test_reading_out_an_impossible_constant_raises_memory_error():
    with pytest.raises(MemoryError, match=r"float64 buffer of shape \(10000000, 100000000\)"):
        (ng.ones(HUGE) + 1).numpy()  # a broadcast constant: the copy out cannot be made


# ---- deep and wide graphs -----------------------------------------------------------

def recurrence(steps: int):
    w = ng.tensor(0.8, requires_grad=True)
    x = ng.tensor(np.array([0.3, -0.2]))
    h = ng.zeros(2)
    for _ in range(steps):
        h = (h * w + x).tanh()
    return w, x, h


def numpy_recurrence_grad(steps: int, w=0.8, x=(0.3, -0.2)):
    """d sum(h) / dw for the recurrence, by forward-mode in NumPy."""
    x, h, dh = np.array(x), np.zeros(2), np.zeros(2)
    for _ in range(steps):
        a = h * w + x
        h, dh = np.tanh(a), (1 - np.tanh(a) ** 2) * (dh * w + h)
    return h, dh.sum()


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
                    reason="tens of thousands of simulated kernels: too slow there")
def test_5000_step_recurrence_backward_has_no_recursion_error():
    w, _, h = recurrence(5000)
    h.sum().backward()
    ref_h, ref_g = numpy_recurrence_grad(5000)
    np.testing.assert_allclose(h.numpy(), ref_h, rtol=1e-12)
    assert w.grad.item() == pytest.approx(ref_g, rel=1e-9, abs=1e-300)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
                    reason="tens of thousands of simulated kernels: too slow there")
def test_2000_step_recurrence_grad_with_create_graph():
    w, _, h = recurrence(2000)
    (g,) = ng.grad(h.sum(), w, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    assert g.item() == pytest.approx(numpy_recurrence_grad(2000)[1], rel=1e-9, abs=1e-300)
    # Differentiable again (a short one: a deep second-order pass compiles many kernels).
    w, _, h = recurrence(30)
    (g,) = ng.grad(h.sum(), w, create_graph=True)
    (gg,) = ng.grad(g, w)
    eps = 1e-6
    fd = (numpy_recurrence_grad(30, w=0.8 + eps)[1]
          - numpy_recurrence_grad(30, w=0.8 - eps)[1]) / (2 * eps)
    assert gg.item() == pytest.approx(fd, rel=1e-5)


@pytest.mark.slow
def test_200_branch_graph_backward():
    a = np.linspace(0.1, 1.0, 3)
    x = ng.tensor(a, requires_grad=True)
    total = ng.zeros(3)
    for k in range(200):
        total = total + (x * (k + 1) / 200).sin()
    total.sum().backward()
    ref = sum((k + 1) / 200 * np.cos(a * (k + 1) / 200) for k in range(200))
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-12)


@pytest.mark.slow
def test_dropping_100000_long_chains_frees_them():
    # A deallocation that recursed once per link would overflow the C stack.
    from numgrad.autograd.graph import Node
    from numgrad.lazy import LazyBuffer
    from numgrad.ops import TABLE

    node = Node()
    for _ in range(100_000):
        node = Node((node,))
    del node
    buf = LazyBuffer.const(1.0, (), np.dtype(np.float64), ng.device.as_device("cpu"))
    for _ in range(100_000):
        buf = LazyBuffer(TABLE["exp"], (buf,), None, (), buf.dtype, buf.device)
    del buf
    # And a recorded history as long, through tensors.
    w = ng.tensor(1.0, requires_grad=True)
    h = w
    for _ in range(20_000):
        h = h * 1.0000001
    del h
    assert w.grad is None
