"""Tensor as NumPy and PyTorch users expect (issue 39): every public name of
``numpy.ndarray`` and of ``torch.Tensor`` (2.14.1, listed in data/torch_tensor_names.txt)
is on `ng.Tensor` or listed here as deliberately absent, with the reason; the methods
added for them give NumPy's values (float64, rtol 1e-12) and correct gradients
(`ng.gradcheck`, float64).

PyTorch is not a test dependency: here each torch-named call is checked against NumPy's
spelling of the same result, and ``tools/torch_names_check.py`` makes the same calls on
PyTorch itself in an environment of its own (all agree with PyTorch 2.14.1).
"""

import copy
import pathlib

import numpy as np
import pytest
from budget import sampled

import numgrad as ng
from numgrad import methods

RTOL = 1e-12

MEMORY = "numgrad shows values, not memory: no buffer, address, strides or flags"
NO_ALIAS = "numgrad shows no aliasing views (SPEC 1): a write through it would be lost"
SHAPE_IN_PLACE = "changes the shape in place; numgrad's in-place forms keep it (x = x.{})"
NO_RNG = "numgrad has no random number generator: draw with NumPy, then ng.tensor"
SPARSE = "numgrad has no sparse layouts"
QUANTIZED = "numgrad has no quantized tensors"
DEVICES = "numgrad's devices are the CPU and CUDA (is_cpu, is_cuda)"
NO_DTYPE = "numgrad has no float16, bfloat16 or complex dtypes (docs/decisions.md)"
REMOVED = "removed from PyTorch itself (it raises there); use ng.linalg's"

NDARRAY_ABSENT = {
    "base": NO_ALIAS, "data": MEMORY, "ctypes": MEMORY, "flags": MEMORY, "strides": MEMORY,
    "setflags": MEMORY, "byteswap": MEMORY, "getfield": MEMORY, "setfield": MEMORY,
    "view": "NumPy's view(dtype) reinterprets bytes (" + MEMORY + "); Tensor.view is "
            "PyTorch's reshape",
    "flat": "a flatiter writes through to the array (" + NO_ALIAS + "); use ravel()",
    "resize": "changes the shape in place with zeros; use ng.resize or reshape",
    "dump": "pickle the tensor itself (pickle.dump(t, f))",
    "dumps": "pickle the tensor itself (pickle.dumps(t))",
    "tofile": "write t.numpy().tofile(f): an explicit read of the value",
    "tobytes": "t.numpy().tobytes(): an explicit read of the value",
    "__array_finalize__": "ndarray subclass protocol",
    "__array_wrap__": "ndarray subclass protocol",
    "__array_interface__": MEMORY + "; NumPy reads a tensor through __array__",
    "__array_struct__": MEMORY + "; NumPy reads a tensor through __array__",
    "__class_getitem__": "Tensor is not generic over its dtype",
    "__delitem__": "NumPy refuses deleting elements too (ng.delete)",
    "__setstate__": "pickling goes through __reduce__",
    "__copy__": "copy.copy goes through __reduce__ (tested below)",
    "__deepcopy__": "copy.deepcopy goes through __reduce__ (tested below)",
}

TORCH_ABSENT = {
    **dict.fromkeys(("data_ptr", "const_data_ptr", "storage", "untyped_storage",
                     "storage_offset", "storage_type", "stride", "dim_order", "is_set_to",
                     "set_", "as_strided", "as_strided_", "as_strided_scatter", "pin_memory",
                     "is_pinned", "is_shared", "share_memory_", "record_stream", "resize",
                     "resize_", "resize_as", "resize_as_", "layout", "data"), MEMORY),
    **dict.fromkeys(("ccol_indices", "col_indices", "crow_indices", "row_indices",
                     "coalesce", "is_coalesced", "indices", "values", "dense_dim",
                     "sparse_dim", "sparse_mask", "to_dense", "to_sparse", "to_sparse_bsc",
                     "to_sparse_bsr", "to_sparse_coo", "to_sparse_csc", "to_sparse_csr",
                     "smm", "sspaddmm", "is_sparse", "is_sparse_csr", "resize_as_sparse_",
                     "sparse_resize_", "sparse_resize_and_clear_"), SPARSE),
    **dict.fromkeys(("dequantize", "int_repr", "q_per_channel_axis", "q_per_channel_scales",
                     "q_per_channel_zero_points", "q_scale", "q_zero_point", "qscheme",
                     "is_quantized"), QUANTIZED),
    **dict.fromkeys(("ipu", "xpu", "mtia", "is_ipu", "is_maia", "is_meta", "is_mkldnn",
                     "is_mps", "is_mtia", "is_vulkan", "is_xla", "is_xpu", "to_mkldnn",
                     "is_distributed"), DEVICES),
    **dict.fromkeys(("half", "bfloat16", "cdouble", "cfloat", "chalf", "stft", "istft"),
                    NO_DTYPE),
    **dict.fromkeys(("bernoulli", "bernoulli_", "multinomial", "normal_", "uniform_",
                     "random_", "cauchy_", "exponential_", "geometric_", "log_normal_"),
                    NO_RNG),
    **dict.fromkeys(("eig", "symeig", "lstsq", "solve", "triangular_solve", "cholesky"),
                    REMOVED),
    **{name + "_": SHAPE_IN_PLACE.format(name)
       for name in ("squeeze", "unsqueeze", "t", "transpose", "swapaxes", "swapdims")},
    "detach_": "numgrad cannot drop a tensor's history in place; use detach()",
    "apply_": "calls Python per element; write it with tensor operations",
    "map_": "calls Python per element; write it with tensor operations",
    "map2_": "calls Python per element; write it with tensor operations",
    "median": "torch's is the lower middle value, NumPy's the mean of the two: ng.median",
    "nanmedian": "torch's is the lower middle value, NumPy's the mean of the two: "
                 "ng.nanmedian",
    "mode": "no most-frequent-value function in numgrad: ng.unique(t, return_counts=True)",
    "cummax": "no running-extreme scan in numgrad", "cummin": "no running-extreme scan",
    "logcumsumexp": "no stable log-sum-exp scan in numgrad (cumsum of exp overflows)",
    "matrix_exp": "no matrix exponential in numgrad", "frexp": "NumPy's frexp is not in numgrad",
    "gcd": "NumPy's gcd is not in numgrad", "gcd_": "NumPy's gcd is not in numgrad",
    "lcm": "NumPy's lcm is not in numgrad", "lcm_": "NumPy's lcm is not in numgrad",
    "lu": "no LU factorisation in numgrad: ng.linalg.solve",
    "lu_solve": "no LU factorisation in numgrad: ng.linalg.solve",
    "geqrf": "LAPACK's Householder form: ng.linalg.qr",
    "orgqr": "LAPACK's Householder form: ng.linalg.qr",
    "ormqr": "LAPACK's Householder form: ng.linalg.qr",
    "scatter_reduce": "products and extremes at scattered positions have no primitive; "
                      "sums: scatter_add", "scatter_reduce_": "see scatter_reduce",
    "index_reduce": "see scatter_reduce", "index_reduce_": "see scatter_reduce",
    "type": "torch's type strings (torch.FloatTensor) have no numgrad counterpart: .dtype, "
            ".astype", "new": "legacy constructor: new_tensor, new_zeros",
    "new_empty_strided": MEMORY, "nonzero_static": "a static-shape form for torch.compile: "
                                                   "ng.argwhere",
    "index": "legacy", "volatile": "legacy (no_grad)", "reinforce": "legacy",
    "name": "named tensors are not in numgrad", "output_nr": "PyTorch autograd internals",
    "grad_dtype": "PyTorch autograd internals", "is_inference": "no inference mode: no_grad",
    "register_post_accumulate_grad_hook": "numgrad's hooks are register_hook's",
    "module_load": "torch.nn.Module internals", "as_subclass": "torch subclass protocol",
    "hash_tensor": "a torch-specific content hash", "slice_inverse": "torch.compile internals",
    "to_padded_tensor": "nested tensors are not in numgrad",
    "is_nested": "nested tensors are not in numgrad",
}

TORCH_MEANS_OTHERWISE = {
    # torch.Tensor name: what it means on ng.Tensor (NumPy's), checked below
    "size": "an int (called, torch's: size() the shape, size(d) an axis's length)",
    "max": "the maximum values (torch with dim: values and indices)",
    "min": "the minimum values", "sort": "sorts in place and returns None",
    "argsort": "NumPy's", "repeat": "NumPy's (torch's repeat is tile)",
    "std": "ddof=0 (torch: correction=1)", "var": "ddof=0 (torch: correction=1)",
    "nonzero": "a tuple of index arrays (torch: ng.argwhere's)",
    "put": "NumPy's: in place, returning None",
    "transpose": "NumPy's permutation; two axes of a tensor of other than 2 dimensions "
                 "(which NumPy refuses) are swapped, as torch's", "squeeze": "NumPy's",
    "round": "NumPy's decimals", "all": "NumPy's", "any": "NumPy's",
    "cumsum": "NumPy's axis=None flattens", "cumprod": "NumPy's axis=None flattens",
    "sum": "NumPy's axis/keepdims: torch's dim/keepdim keywords are a TypeError",
}


def _torch_names() -> list[str]:
    path = pathlib.Path(__file__).parents[1] / "data" / "torch_tensor_names.txt"
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


def test_every_ndarray_name_is_on_tensor_or_absent_with_a_reason():
    names = [n for n in dir(np.ndarray) if not n.startswith("_") or
             (n.startswith("__") and n not in dir(object))]
    missing = [n for n in names if not hasattr(ng.Tensor, n) and n not in NDARRAY_ABSENT]
    assert not missing, f"ndarray names neither on Tensor nor listed as absent: {missing}"
    stale = [n for n in NDARRAY_ABSENT if hasattr(ng.Tensor, n) and n != "view"]
    assert not stale, f"listed as absent but present: {stale}"


def test_every_torch_name_is_on_tensor_or_absent_with_a_reason():
    names = _torch_names()
    assert len(names) == 604
    missing = [n for n in names if not hasattr(ng.Tensor, n) and n not in TORCH_ABSENT]
    assert not missing, f"torch.Tensor names neither on Tensor nor absent: {missing}"
    stale = [n for n in TORCH_ABSENT if hasattr(ng.Tensor, n)]
    assert not stale, f"listed as absent but present: {stale}"
    assert set(TORCH_MEANS_OTHERWISE) <= set(names)
    assert all(hasattr(ng.Tensor, n) for n in TORCH_MEANS_OTHERWISE)


def test_names_both_give_keep_numpys_meaning():
    a = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    x = ng.tensor(a)
    assert x.size == 6 and isinstance(x.size, int)
    np.testing.assert_array_equal(x.max(1).numpy(), a.max(1))
    np.testing.assert_array_equal(x.repeat(2, axis=0).numpy(), a.repeat(2, axis=0))
    assert x.std().item() == pytest.approx(a.std(), rel=RTOL)
    assert isinstance(x.nonzero(), tuple)
    with pytest.raises(TypeError, match="dim"):
        x.sum(dim=1)
    y = ng.tensor(a.copy())
    assert y.sort() is None
    np.testing.assert_array_equal(y.numpy(), np.sort(a))
    assert y.put([0], [9.0]) is None and y.numpy()[0, 0] == 9.0


# ---- numpy.ndarray's methods ------------------------------------------------------------

A = np.arange(12.0).reshape(3, 4) - 5.5


@pytest.mark.parametrize("call", [
    "take([0, 5, -1])", "take([[0], [2]], axis=1)", "take([7, -9], mode='wrap')",
    "take([7, -9], axis=0, mode='clip')", "compress([True, False, True])",
    "compress([0, 1], axis=1)", "compress([False, True, True, False, True], axis=None)",
    "searchsorted([-5.5, 0.0, 100.0])", "searchsorted([0.5], side='right')",
])
def test_ndarray_methods_match_numpy(call):
    source = A.ravel() if call.startswith("searchsorted") else A
    got = eval(f"t.{call}", {"t": ng.tensor(source)})
    np.testing.assert_allclose(got.numpy(), eval(f"a.{call}", {"a": source}), rtol=RTOL)


def test_choose_matches_numpy_in_every_mode():
    index = np.array([[0, 2, 1], [3, -1, 1]])
    choices = [np.arange(3.0), np.full((2, 3), 10.0), 7.0]
    for mode in ("wrap", "clip"):
        np.testing.assert_array_equal(
            ng.choose(ng.tensor(index), choices, mode=mode).numpy(),
            np.choose(index, choices, mode=mode))
    valid = index.clip(0, 2)
    np.testing.assert_array_equal(ng.tensor(valid).choose(choices).numpy(),
                                  np.choose(valid, choices))
    with pytest.raises(ValueError, match="outside 0..2"):
        ng.tensor(index).choose(choices)
    with pytest.raises(TypeError, match="integer"):
        ng.tensor([0.0]).choose(choices)


def test_choose_is_differentiable_in_the_choices():
    index = ng.tensor([0, 1, 1, 0])
    assert ng.gradcheck(lambda a, b: index.choose([a, b]),
                        (ng.tensor(np.linspace(0, 1, 4), requires_grad=True),
                         ng.tensor(np.linspace(2, 3, 4), requires_grad=True)))


def test_take_and_compress_are_differentiable():
    x = ng.tensor(A, requires_grad=True)
    assert ng.gradcheck(lambda t: t.take([[1, 1], [11, 0]]) * t.compress([1, 0, 1], 0).sum(),
                        (x,))
    assert ng.gradgradcheck(lambda t: (t.take([3, 3, 4]) ** 3).sum(), (x,))


def test_put_and_fill_change_the_tensor_in_place_as_numpy():
    a, t = A.copy(), ng.tensor(A)
    a.put([0, -1, 5], [10.0, 20.0]), t.put([0, -1, 5], [10.0, 20.0])
    np.testing.assert_array_equal(t.numpy(), a)
    a.put([20, -20], [1.0], mode="wrap"), ng.put(t, [20, -20], [1.0], mode="wrap")
    np.testing.assert_array_equal(t.numpy(), a)
    a.fill(2.5), t.fill(2.5)
    np.testing.assert_array_equal(t.numpy(), a)
    with pytest.raises(IndexError, match="out of range"):
        t.put([12], [1.0])
    leaf = ng.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        leaf.fill(0.0)


def test_complex_parts_of_a_real_tensor():
    x = ng.tensor(A, requires_grad=True)
    np.testing.assert_array_equal(x.real.numpy(), A)
    np.testing.assert_array_equal(x.imag.numpy(), np.zeros_like(A))
    np.testing.assert_array_equal(x.conj().numpy(), A)
    assert ng.tensor([True]).conjugate().dtype == ng.int8
    (x.real * 2 + x.conj()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full_like(A, 3.0))


def test_contains_and_the_other_in_place_operators():
    x = ng.tensor(A)
    assert 0.5 in x and 0.25 not in x
    b = ng.tensor([6, 5, 3])
    b &= 3
    b |= 8
    b ^= 1
    np.testing.assert_array_equal(b.numpy(), ((np.array([6, 5, 3]) & 3) | 8) ^ 1)
    m = ng.tensor(np.eye(2))
    m @= ng.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(m.numpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_copy_and_deepcopy_of_tensors():
    x = ng.tensor(A, requires_grad=True)
    for made in (copy.copy(x), copy.deepcopy(x)):
        np.testing.assert_array_equal(made.numpy(), A)
        assert made.requires_grad and made is not x


# ---- torch.Tensor's names ---------------------------------------------------------------

B = np.cos(np.arange(12.0)).reshape(3, 4)
S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
INDEX = np.array([[0, 2, 1, 0], [1, 1, 0, 2]])
MASK = B > 0
V = np.array([1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 1.0])

# torch call on t (A), b (B), s (S), v (V), i (INDEX), m (MASK): NumPy's value for it
TORCH_CALLS = {
    "absolute()": lambda: np.abs(A), "add(b, alpha=2)": lambda: A + 2 * B,
    "sub(b, alpha=0.5)": lambda: A - 0.5 * B,
    "div(b, rounding_mode='floor')": lambda: np.floor_divide(A, B),
    "div(b, rounding_mode='trunc')": lambda: np.trunc(A / B),
    "clamp(min=0)": lambda: np.maximum(A, 0), "clamp_max(1.0)": lambda: np.minimum(A, 1),
    "frac()": lambda: A - np.trunc(A), "lerp(b, 0.25)": lambda: A + 0.25 * (B - A),
    "addcmul(b, b, value=0.5)": lambda: A + 0.5 * B * B,
    "hardshrink(2.0)": lambda: np.where(np.abs(A) > 2, A, 0.0),
    "angle()": lambda: np.angle(A), "float()": lambda: A.astype(np.float32),
    "long()": lambda: A.astype(np.int64),
    "ldexp(t.long())": lambda: np.ldexp(A, A.astype(np.int64)),
    "addmm(b[:, :3], s, beta=0.5, alpha=2)": lambda: 0.5 * A[:, :3] + 2 * B[:, :3] @ S,
    "mm(b.T)": lambda: A @ B.T, "dist(b, 1)": lambda: np.abs(A - B).sum(),
    "norm()": lambda: np.linalg.norm(A), "norm(1, 1)": lambda: np.abs(A).sum(1),
    "norm(dim=0, keepdim=True)": lambda: np.linalg.norm(A, axis=0, keepdims=True),
    "amax((0, 1), keepdim=True)": lambda: A.max(keepdims=True),
    "amin(1)": lambda: A.min(1), "nansum(1)": lambda: A.sum(1),
    "quantile(0.3, 1)": lambda: np.quantile(A, 0.3, 1),
    "topk(2)[0]": lambda: -np.sort(-A, 1)[:, :2], "topk(2)[1]":
        lambda: np.argsort(-A, 1, kind="stable")[:, :2],
    "topk(1, 0, largest=False)[0]": lambda: A.min(0, keepdims=True),
    "kthvalue(2, 1)[0]": lambda: np.sort(A, 1)[:, 1], "msort()": lambda: np.sort(A, 0),
    "softmax(1)": lambda: np.exp(A) / np.exp(A).sum(1, keepdims=True),
    "cov()": lambda: np.cov(A), "cov(correction=0)": lambda: np.cov(A, ddof=0),
    "expand(2, 3, 4)": lambda: np.broadcast_to(A, (2, 3, 4)),
    "view(4, 3)": lambda: A.reshape(4, 3), "view(-1)": lambda: A.ravel(),
    "unsqueeze(1)": lambda: A[:, None], "t()": lambda: A.T,
    "narrow(1, 1, 2)": lambda: A[:, 1:3], "narrow(0, -2, 2)": lambda: A[1:],
    "select(1, 2)": lambda: A[:, 2], "unflatten(1, (2, 2))": lambda: A.reshape(3, 2, 2),
    "gather(1, i)": lambda: np.take_along_axis(A[:2], INDEX, 1),
    "index_select(1, i[0, :2])": lambda: A[:, [0, 2]],
    "masked_fill(m, 9.0)": lambda: np.where(MASK, 9.0, A),
    "masked_select(m)": lambda: A[MASK],
    "scatter_add(0, i, b)": lambda: _scatter_add(A, INDEX, B[:2]),
    "index_add(1, i[0, :2], b[:, :2], alpha=2)": lambda: _index_add(A, [0, 2], 2 * B[:, :2]),
    "masked_scatter(m, b)": lambda: _masked_scatter(A, MASK, B),
    "renorm(2, 0, 5.0)": lambda: A * np.where(
        np.linalg.norm(A, axis=1, keepdims=True) > 5,
        5 / (np.linalg.norm(A, axis=1, keepdims=True) + 1e-7), 1.0),
    "unfold(1, 3, 1)": lambda: np.lib.stride_tricks.sliding_window_view(A, 3, 1),
    "diag_embed()": lambda: np.einsum("ij,jk->ijk", A, np.eye(4)),
    "slice_scatter(b[:, :2], 1, 0, 4, 2)": lambda: _set(A, (slice(None), slice(0, 4, 2)),
                                                        B[:, :2]),
    "diagonal_scatter(b[0, :3], 1)": lambda: _set(A, ([0, 1, 2], [1, 2, 3]), B[0, :3]),
    "svd()[1]": lambda: np.linalg.svd(A, compute_uv=False),
    "histc(4, -3, 3)": lambda: np.histogram(A[np.abs(A) <= 3], 4, (-3, 3))[0].astype(float),
    "sum_to_size(1, 4)": lambda: A.sum(0, keepdims=True),
    "new_full((2,), 7)": lambda: np.full(2, 7.0), "repeat_interleave(2, 0)":
        lambda: A.repeat(2, 0), "diagflat(-1)": lambda: np.diagflat(A, -1),
    "is_floating_point()": lambda: True, "dim()": lambda: 2, "numel()": lambda: 12,
    "equal(t)": lambda: True, "equal(b)": lambda: False,
}


def _set(a, key, value):
    out = a.copy()
    out[key] = value
    return out


def _scatter_add(a, index, src):
    out = a.copy()
    np.add.at(out, (index, np.arange(index.shape[1])), src)
    return out


def _index_add(a, columns, src):
    out = a.copy()
    np.add.at(out, (slice(None), columns), src)
    return out


def _masked_scatter(a, mask, src):
    out = a.copy()
    out[mask] = src.ravel()[:mask.sum()]
    return out


@pytest.mark.parametrize("call", sampled(list(TORCH_CALLS), 2, start=1))
def test_torch_named_methods_match_numpy(call):
    names = dict(t=ng.tensor(A), b=ng.tensor(B), s=ng.tensor(S), i=ng.tensor(INDEX),
                 m=ng.tensor(MASK))
    got = eval(f"{'t[:, :3]' if call.startswith('addmm') else 't'}.{call}", {}, names)
    got = got.numpy() if isinstance(got, ng.Tensor) else got
    expected = TORCH_CALLS[call]()
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=1e-13)


def test_torch_splits_and_unique_consecutive():
    v = ng.tensor(V)
    assert [p.numpy().tolist() for p in v.split(3)] == [[1, 1, 2], [2, 2, 3], [1]]
    assert [p.shape for p in v.split([2, 5])] == [(2,), (5,)]
    assert [p.shape for p in v.chunk(4)] == [(2,), (2,), (2,), (1,)]
    assert [p.shape for p in ng.tensor(np.zeros(6)).chunk(4)] == [(2,), (2,), (2,)]
    assert [p.shape for p in ng.tensor(A).unbind(1)] == [(3,)] * 4
    values, inverse, counts = v.unique_consecutive(return_inverse=True, return_counts=True)
    assert values.numpy().tolist() == [1, 2, 3, 1]
    assert inverse.numpy().tolist() == [0, 0, 1, 1, 1, 2, 3]
    assert counts.numpy().tolist() == [2, 3, 1, 1]
    with pytest.raises(ValueError, match="do not add up"):
        v.split([2, 2])


def test_size_flatten_and_transpose_answer_both_habits():
    x = ng.tensor(np.zeros((2, 3, 4)))
    assert x.size == 24 and x.size() == (2, 3, 4) and x.size(-1) == 4
    assert np.zeros(x.size).shape == (24,) and copy.deepcopy(x.size)(1) == 3
    assert x.flatten().shape == (24,) and x.flatten(1).shape == (2, 12)
    assert x.flatten(0, 1).shape == (6, 4) and ng.tensor(1.0).flatten().shape == (1,)
    assert x.transpose(0, 2).shape == (4, 3, 2) and x.transpose(1, 0, 2).shape == (3, 2, 4)
    assert x.permute(2, 0, 1).shape == (4, 2, 3) and x.T.shape == (4, 3, 2)


def test_torch_queries_and_constructors():
    x = ng.tensor(A)
    assert x.is_cpu and not x.is_cuda and x.get_device() == -1 and x.element_size() == 8
    assert x.is_contiguous() and x.contiguous() is x and not x.is_complex()
    assert x.new_zeros(2, 3).shape == (2, 3) and x.new_ones((2,)).dtype == ng.float64
    assert x.type_as(ng.tensor([1], dtype=ng.int32)).dtype == ng.int32
    assert x.H.shape == (4, 3) and x.mH.shape == (4, 3)
    with pytest.raises(TypeError, match="reinterprets bytes"):
        x.view(ng.int64)
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        ng.tensor(np.zeros((2, 2, 2))).t()
    for call, message in [(lambda: x.topk(5), "topk: k = 5 is outside 0..4"),
                          (lambda: x.kthvalue(0), "kthvalue: k = 0 is outside 1..4"),
                          (lambda: x.chunk(0), "chunks must be positive"),
                          (lambda: x.unfold(1, 5, 1), "unfold: size 5"),
                          (lambda: x.unfold(1, 2, 0), "step 0 positive")]:
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("call", sampled([
    "gather(1, i)", "scatter_add(0, i, t[:2] * 3)", "index_add(1, i[0, :2], t[:, :2])",
    "masked_fill(m, 1.0)", "topk(2)[0]", "kthvalue(2, 1)[0]", "renorm(2, 0, 3.0)",
    "prelu(t[0, :1] * 0 + 0.25)", "unfold(1, 3, 1)", "lerp(t * 2, 0.3)",
    "t().addmm(t.t(), t[:, :3], beta=0.5, alpha=2)", "norm(3)", "masked_scatter(m, t * 3)",
    "diag_embed(1)", "select_scatter(t[0] * 2, 0, 1)", "diagonal_scatter(t[:, 0], 0)",
    "index_copy(1, i[0, :2], t[:, :2] * 5)", "slice_scatter(t[:, :2] * 7, 1, 0, 4, 2)",
    "expand(2, 3, 4)", "chunk(2, 1)[1]", "split([1, 3], 1)[1]", "masked_select(m)",
    "div(t + 9)", "hardshrink(2.0)",
], 2))
def test_torch_named_composites_have_gradients(call):
    names = dict(i=ng.tensor(INDEX), m=ng.tensor(MASK))
    x = ng.tensor(A, requires_grad=True)
    assert ng.gradcheck(lambda t: eval(f"t.{call}", {}, {**names, "t": t}), (x,))


def test_torch_named_linear_algebra_gradients_to_second_order():
    x = ng.tensor(S, requires_grad=True)
    assert ng.gradgradcheck(lambda t: t.logdet() + t.inverse().sum(), (x,))
    assert ng.gradcheck(lambda t: t.svd()[1], (x,))


def test_in_place_forms_give_the_tensor_the_out_of_place_value():
    for name in ("add", "mul", "clamp", "exp", "sigmoid", "masked_fill", "lerp", "tril"):
        assert getattr(ng.Tensor, name + "_").__doc__.startswith(f"``{name}`` in place")
    x = ng.tensor(A)
    assert x.add_(ng.tensor(B), alpha=2) is x
    np.testing.assert_allclose(x.numpy(), A + 2 * B, rtol=RTOL)
    x.masked_fill_(ng.tensor(MASK), 0.0).clamp_(-1.0, 1.0)
    np.testing.assert_allclose(x.numpy(), np.clip(np.where(MASK, 0.0, A + 2 * B), -1, 1))
    x.zero_()
    np.testing.assert_array_equal(x.numpy(), np.zeros_like(A))
    x.copy_(ng.tensor(B[0]))
    np.testing.assert_array_equal(x.numpy(), np.broadcast_to(B[0], A.shape))
    x.fill_diagonal_(5.0)
    np.testing.assert_array_equal(np.diag(x.numpy()), [5.0, 5.0, 5.0])
    z = ng.tensor(np.zeros(3))
    z.put_(ng.tensor([0, 0, 2]), ng.tensor([1.0, 2.0, 3.0]), accumulate=True)
    np.testing.assert_array_equal(z.numpy(), [3.0, 0.0, 3.0])
    with pytest.raises(TypeError, match="in place in a int64"):
        ng.tensor([1, 2]).exp_()


def test_in_place_forms_follow_the_leaf_rule():
    w = ng.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w.add_(1.0)
    with ng.no_grad():
        w.add_(ng.tensor(B), alpha=-0.1)
    np.testing.assert_allclose(w.numpy(), A - 0.1 * B, rtol=RTOL)
    y = w * 2
    y.mul_(3.0)
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full_like(A, 6.0))


def test_every_in_place_form_has_its_out_of_place_method():
    assert all(hasattr(ng.Tensor, name) and hasattr(ng.Tensor, name + "_")
               for name in methods.IN_PLACE)
