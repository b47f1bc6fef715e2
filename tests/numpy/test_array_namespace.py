"""numgrad as a namespace of the Python Array API standard (2024.12): ``t.__array_namespace__()``,
``__array_namespace_info__``, ``to_device``, the standard's keywords on NumPy's functions
(``shape=``, ``correction=``, ``dtype=``, ``descending=``, ``axis=None``), and what it buys:
SciPy's functions that support the standard (``SCIPY_ARRAY_API=1``) run on tensors and
return differentiable tensors.

Values float64, against NumPy and SciPy on arrays, rtol 1e-12 (1e-10 for SciPy's
multi-step statistics, which order their sums otherwise); gradients against finite
differences (``ng.gradcheck``).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numgrad as ng

rng = np.random.default_rng(5)


def test_a_tensor_names_numgrad_as_its_namespace():
    t = ng.tensor([1.0, 2.0])
    assert t.__array_namespace__() is ng
    assert t.__array_namespace__(api_version="2023.12") is ng
    assert ng.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError, match=r"version '2019\.01'"):
        t.__array_namespace__(api_version="2019.01")


def test_the_namespace_info_describes_numgrads_devices_and_dtypes():
    info = ng.__array_namespace_info__()
    capabilities = info.capabilities()
    assert capabilities["boolean indexing"] and capabilities["data-dependent shapes"]
    assert capabilities["max dimensions"] == 64
    assert info.default_device() == ng.get_default_device()
    assert ng.Device("cpu") in info.devices()
    assert info.default_dtypes() == {"real floating": ng.float64, "complex floating": None,
                                     "integral": ng.int64, "indexing": ng.int64}
    assert info.dtypes() == {"bool": ng.bool_, "int8": ng.int8, "int16": ng.int16,
                             "int32": ng.int32, "int64": ng.int64, "uint8": ng.uint8,
                             "uint16": ng.uint16, "uint32": ng.uint32, "uint64": ng.uint64,
                             "float32": ng.float32, "float64": ng.float64}
    assert info.dtypes(kind="real floating") == {"float32": ng.float32, "float64": ng.float64}
    assert info.dtypes(kind=("bool", "signed integer")) == {
        "bool": ng.bool_, "int8": ng.int8, "int16": ng.int16, "int32": ng.int32,
        "int64": ng.int64}
    assert info.dtypes(kind="unsigned integer") == {
        "uint8": ng.uint8, "uint16": ng.uint16, "uint32": ng.uint32, "uint64": ng.uint64}
    with pytest.raises(ValueError):
        info.dtypes(device="tpu")


def test_asarray_keeps_a_tensors_history_when_it_copies():
    # (SciPy's logsumexp copies with asarray(copy=True) before setting its maximum to
    # -inf: a copy without history left every other element without gradient)
    t = ng.tensor([0.5, 2.0, 1.0], requires_grad=True)
    for copy in (None, True):
        out = ng.asarray(t, copy=copy)
        assert (out is t) == (copy is None) and out.requires_grad
        (g,) = ng.grad((out * out).sum(), t)
        np.testing.assert_array_equal(g.numpy(), 2 * t.numpy())
    (g,) = ng.grad(ng.asarray(t, dtype=ng.float32).sum(), t)
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0, 1.0])


def test_to_device_is_to():
    t = ng.tensor([1.0, 2.0], requires_grad=True)
    moved = t.to_device("cpu")
    assert moved.device == ng.Device("cpu") and moved.requires_grad
    with pytest.raises(ValueError, match="stream"):
        t.to_device("cpu", stream=1)


def test_a_shape_by_its_keyword():
    assert ng.zeros(shape=(2, 3)).shape == (2, 3)
    assert ng.ones(shape=4).shape == (4,)
    assert ng.empty(shape=(1, 2), dtype=ng.int32).dtype == ng.int32
    assert ng.zeros(2, 3).shape == ng.zeros((2, 3)).shape == (2, 3)
    with pytest.raises(TypeError, match="shape was given twice"):
        ng.zeros(2, shape=(2,))


def test_correction_is_ddof():
    a = rng.standard_normal((3, 4))
    t = ng.tensor(a)
    np.testing.assert_allclose(t.var(correction=1).numpy(), np.var(a, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(ng.std(t, axis=0, correction=1.5).numpy(),
                               np.std(a, axis=0, correction=1.5), rtol=1e-12)
    with pytest.raises(ValueError, match="ddof or correction"):
        t.var(ddof=1, correction=1)


def test_mean_and_prod_compute_in_the_dtype_asked():
    a = rng.uniform(0.5, 1.5, (3, 4))
    t = ng.tensor(a)
    for ours, theirs in [(t.mean(axis=1, dtype=ng.float32), np.mean(a, axis=1, dtype=np.float32)),
                         (ng.prod(t, dtype=ng.float32), np.prod(a, dtype=np.float32)),
                         (ng.prod(ng.tensor([2, 3]), dtype=ng.float64),
                          np.prod([2, 3], dtype=np.float64))]:
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-6)


def test_descending_sorts_are_stable_and_differentiable():
    a = np.array([[3.0, 1.0, 3.0, 2.0, 1.0], [0.5, np.nan, 4.0, 0.5, -1.0]])
    t = ng.tensor(a)
    # stable: ties keep their order (NumPy's stable argsort of the negated values, where
    # NaN sorts first instead of last)
    np.testing.assert_array_equal(ng.argsort(t[0], descending=True).numpy(),
                                  np.argsort(-a[0], stable=True))
    np.testing.assert_array_equal(ng.argsort(t, axis=1, descending=True).numpy()[1],
                                  [1, 2, 0, 3, 4])
    np.testing.assert_array_equal(ng.sort(t[0], descending=True).numpy(), [3, 3, 2, 1, 1])
    sorted_rows = ng.sort(t, descending=True).numpy()
    np.testing.assert_array_equal(sorted_rows[1], [np.nan, 4.0, 0.5, 0.5, -1.0])
    copy = ng.tensor(a[0])
    copy.sort(descending=True)
    np.testing.assert_array_equal(copy.numpy(), [3, 3, 2, 1, 1])
    x = ng.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    assert ng.gradcheck(lambda v: ng.sort(v, axis=1, descending=True) * ng.arange(5.0), (x,))


def test_concatenate_flattens_for_axis_none_and_take_along_axis_defaults_to_the_last():
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4,))
    np.testing.assert_array_equal(ng.concatenate([a, ng.tensor(b)], axis=None).numpy(),
                                  np.concatenate([a, b], axis=None))
    np.testing.assert_array_equal(ng.concat([a, b], axis=None).numpy(),
                                  np.concatenate([a, b], axis=None))
    order = np.argsort(a, axis=-1)
    np.testing.assert_array_equal(ng.take_along_axis(ng.tensor(a), ng.tensor(order)).numpy(),
                                  np.take_along_axis(a, order, axis=-1))


# ---- SciPy through the standard --------------------------------------------------------

#: SciPy functions that run on numgrad tensors under SCIPY_ARRAY_API=1 (SciPy 1.17):
#: docs/interop.rst lists them
SCIPY = textwrap.dedent("""
    import os, warnings
    os.environ["SCIPY_ARRAY_API"] = "1"  # (read when SciPy is imported)
    import numpy as np, scipy.special as sp, scipy.stats as st
    import numgrad as ng

    a = np.array([0.5, 1.0, 2.0, 3.5, 0.25])
    cases = {
        "special.logsumexp": lambda x: sp.logsumexp(x),
        "special.softmax": lambda x: sp.softmax(x),
        "special.log_softmax": lambda x: sp.log_softmax(x),
        "special.rel_entr": lambda x: sp.rel_entr(x, x[::-1] + 1),
        "stats.moment": lambda x: st.moment(x, 3),
        "stats.skew": lambda x: st.skew(x),
        "stats.kurtosis": lambda x: st.kurtosis(x),
        "stats.zscore": lambda x: st.zscore(x),
        "stats.gmean": lambda x: st.gmean(x),
        "stats.hmean": lambda x: st.hmean(x),
        "stats.pmean": lambda x: st.pmean(x, 2.5),
        "stats.variation": lambda x: st.variation(x),
        "stats.sem": lambda x: st.sem(x),
        "stats.tmean": lambda x: st.tmean(x),
        "stats.tvar": lambda x: st.tvar(x),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", ng.GradientDroppedWarning)  # none converts
        for name, f in cases.items():
            t = ng.tensor(a, requires_grad=True)
            out = f(t)
            assert isinstance(out, ng.Tensor) and out.requires_grad, name
            np.testing.assert_allclose(out.numpy(), f(a), rtol=1e-10, err_msg=name)
            weights = np.linspace(0.5, 1.5, out.size).reshape(out.shape)
            assert ng.gradcheck(lambda x: (f(x) * weights).sum(), (t,)), name
    # one SciPy converts to NumPy (its special ufuncs, for a namespace it does not know):
    # the gradient is lost, and that is said
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = sp.erf(ng.tensor(a, requires_grad=True))
    assert not out.requires_grad
    assert any(issubclass(w.category, ng.GradientDroppedWarning) for w in caught)
    print("ok", len(cases))
""")


def test_scipy_functions_that_support_the_standard_run_differentiably_on_tensors():
    # A process of its own: SciPy reads SCIPY_ARRAY_API when it is imported. What is
    # tested is SciPy's dispatch and the gradients, so its kernels are interpreted (a
    # quarter minute of compiling otherwise; the rows are compiled and tested elsewhere).
    run = subprocess.run([sys.executable, "-c", SCIPY], text=True, capture_output=True,
                         env=dict(os.environ, NUMGRAD_CPU_KERNELS="numpy"), timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["ok", "15"]
