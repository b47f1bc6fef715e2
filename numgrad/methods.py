"""Tensor's methods: one table (`METHODS`) binds them to numgrad's functions when numgrad
is imported (`bind`), as ``jax/_src/numpy/array_methods.py`` binds JAX's Array methods.

- ``numpy.ndarray``'s methods are NumPy's functions of the same names (`numgrad.numpy`):
  ``t.exp()`` is ``ng.exp(t)``, ``t.take(...)`` is ``ng.take(t, ...)``, as ``a.take`` is
  ``np.take(a, ...)``. Where the method's signature differs from the function's
  (``t.reshape(2, 3)``, ``t.transpose(1, 0)``, the in-place ``t.sort()``), a thin adapter
  below calls the function.
- ``torch.Tensor``'s names: a PyTorch user's ``x.unsqueeze(1)``, ``x.masked_fill(m, 0)``,
  ``x.gather(1, i)`` or ``w.add_(g, alpha=-lr)`` works on a numgrad tensor. Each is a
  numgrad function, or a composite of numgrad operations (`numgrad.torch_composites`),
  under ``torch.Tensor``'s name and signature (``dim``, ``keepdim``), so it fuses and
  differentiates as they do. Each out-of-place name that keeps the shape also has its
  in-place ``name_`` form: the tensor gets the new value, as ``x += 1`` gives it
  (`Tensor._rebind`'s rules).

Where ``numpy.ndarray`` and ``torch.Tensor`` give one name two meanings (``size``,
``max(dim)``, ``sort``, ``repeat``, ``std``, ``nonzero``, ``put``...), numgrad keeps NumPy's
(docs/decisions.md). tests/numpy/test_tensor_habits.py lists the names of both that numgrad
leaves out, each with its reason. The table lives beside the package root, not in
`numgrad.numpy`: it binds `numgrad.linalg`'s, `numgrad.scipy`'s and `numgrad.nn`'s
functions too.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from numgrad import dtypes, linalg
from numgrad import torch_composites as tc
from numgrad.linalg.products import inner, kron, matmul, outer
from numgrad.nn.functional import log_softmax, softmax
from numgrad.numpy import (
    elementwise,
    indexing,
    ordering,
    reductions,
    shaping,
    standard,
)
from numgrad.numpy.assembly import (
    array_split,
    diag,
    dsplit,
    fliplr,
    flipud,
    hsplit,
    rot90,
    take_along_axis,
    tile,
    vsplit,
)
from numgrad.numpy.creation import full
from numgrad.numpy.searching import argwhere, bincount, histogram, nonzero, searchsorted, unique
from numgrad.numpy.statistics import corrcoef, count_nonzero, cov, nanquantile, quantile
from numgrad.ops import TABLE, UNARY
from numgrad.primitives import _elementwise, _reshape, _shape_arg
from numgrad.scipy import linalg as scipy_linalg
from numgrad.scipy import special
from numgrad.tensor import Tensor

# ---- methods whose signatures differ from their functions' ------------------------------


def reshape(self, *shape) -> Tensor:
    """This tensor in another shape of the same size; one -1 stands for the rest."""
    return _reshape(self, _shape_arg(shape))


def transpose(self, *axes) -> Tensor:
    """Permute the axes; with none given, reverse them (``.T``). Two axes of a tensor
    of other than 2 dimensions, which NumPy refuses, are swapped (PyTorch's
    ``transpose(dim0, dim1)``)."""
    if len(axes) == 2 and self.ndim != 2 and all(type(a) is int for a in axes):
        return shaping.swapaxes(self, *axes)
    return shaping.permute(self, *axes)


def clip(self, min=None, max=None) -> Tensor:  # noqa: A002 - NumPy's names
    """Limit values to ``[min, max]`` (NaN in `self` or a bound gives NaN, as in NumPy);
    the gradient passes at the bounds."""
    return elementwise.clip(self, min, max)


def where(self, condition, other) -> Tensor:
    """``where(condition, self, other)``, as PyTorch's ``Tensor.where``."""
    return elementwise.where(condition, self, other)


def polygamma(self, n) -> Tensor:
    """The `n`-th derivative of `digamma` (PyTorch's ``x.polygamma(n)``; ``ng.polygamma(n,
    x)``): `n` a non-negative integer (a tensor of orders is floored), 0 giving digamma.

    >>> ng.tensor([1.0, 2.0]).polygamma(1).round(12).tolist()  # pi**2 / 6, pi**2 / 6 - 1
    [1.644934066848, 0.644934066848]
    """
    if isinstance(n, numbers.Integral) and n == 0:
        return self.digamma()  # (the row's own digamma has the Taylor series at its root)
    return _elementwise("polygamma", n, self)


def sort(self, axis: int = -1, kind: str | None = None, order=None, *,
         stable: bool | None = None, descending: bool = False) -> None:
    """Sort this tensor in place along `axis`, as NumPy's ``ndarray.sort``; returns None.

    The tensor gets the sorted value (tensors taken from it before keep theirs); a
    leaf that requires grad can be sorted only under ``ng.no_grad()``.
    ``ng.sort(x)`` returns a sorted copy instead.

    Examples
    --------
    >>> x = ng.tensor([3.0, 1.0, 2.0])
    >>> ng.sort(x)
    tensor([1., 2., 3.], dtype=float64, device='cpu')
    >>> x.sort()
    >>> x
    tensor([1., 2., 3.], dtype=float64, device='cpu')
    """
    if axis is None:
        raise TypeError("Tensor.sort sorts in place along one axis, so axis=None is not "
                        "allowed; numgrad.sort(x, axis=None) sorts a flattened copy")
    self._rebind(self)  # the in-place checks, before the permutation is computed
    self._rebind(ordering.sort(self, axis, kind, order, stable=stable, descending=descending))


def partition(self, kth, axis: int = -1, kind: str = "introselect", order=None) -> None:
    """Partition this tensor in place along `axis`, as NumPy's ``ndarray.partition``;
    returns None (in-place rules as `sort`'s). ``ng.partition(x, kth)`` returns a
    partitioned copy."""
    if axis is None:
        raise TypeError("Tensor.partition works in place along one axis, so axis=None is "
                        "not allowed; numgrad.partition(x, kth, axis=None) flattens")
    self._rebind(self)  # the in-place checks, before the permutation is computed
    self._rebind(ordering.partition(self, kth, axis, kind, order))


def _cast(dtype):
    def cast(self, memory_format=None) -> Tensor:
        return self.astype(dtype)
    cast.__doc__ = f"This tensor as {dtype.name} (torch's cast methods)."
    return cast


def _reduce(f):
    """A NumPy reduction ``f(x, axis, keepdims)`` under torch's ``dim``/``keepdim``."""
    def reduce(self, dim=None, keepdim: bool = False, **kwargs):
        return f(self, tc.axes_of(dim), keepdims=keepdim, **kwargs)
    reduce.__doc__ = f"``{f.__name__}`` over `dim` (torch's ``dim``/``keepdim``)."
    return reduce


METHODS = {
    # numpy.ndarray's, NumPy's functions (and PyTorch's elementwise methods of NumPy's names)
    **{p.name: getattr(elementwise, p.name) for p in TABLE.values()
       if p.kind == UNARY and p.name != "rint"},
    "__neg__": elementwise.negative, "__pos__": elementwise.positive,
    "__abs__": elementwise.abs, "__invert__": elementwise.invert,
    "__pow__": lambda self, other: elementwise.power(self, other),
    "__rpow__": lambda self, other: elementwise.power(other, self),
    "polygamma": polygamma, "square": elementwise.square, "relu": elementwise.relu,
    "round": elementwise.round, "deg2rad": elementwise.deg2rad,
    "rad2deg": elementwise.rad2deg, "sinc": elementwise.sinc,
    "nan_to_num": elementwise.nan_to_num, "isclose": elementwise.isclose,
    "allclose": elementwise.allclose, "clip": clip, "where": where,
    "sum": reductions.sum, "prod": reductions.prod, "max": reductions.max,
    "min": reductions.min, "mean": reductions.mean, "var": reductions.var,
    "std": reductions.std, "logsumexp": reductions.logsumexp, "argmax": reductions.argmax,
    "argmin": reductions.argmin, "all": reductions.all, "any": reductions.any,
    "reshape": reshape, "transpose": transpose, "permute": shaping.permute,
    "swapaxes": shaping.swapaxes, "broadcast_to": shaping.broadcast_to,
    "expand_dims": shaping.expand_dims, "squeeze": shaping.squeeze, "ravel": shaping.ravel,
    "flatten": shaping.flatten, "flip": shaping.flip, "roll": shaping.roll,
    "repeat": shaping.repeat, "moveaxis": shaping.moveaxis, "diagonal": shaping.diagonal,
    "trace": shaping.trace, "tril": shaping.tril, "triu": shaping.triu,
    "cumsum": ordering.cumsum, "cumprod": ordering.cumprod, "diff": ordering.diff,
    "argsort": ordering.argsort, "argpartition": ordering.argpartition, "sort": sort,
    "partition": partition,
    "take": indexing.take, "compress": lambda self, condition, axis=None:
        indexing.compress(condition, self, axis), "choose": indexing.choose,
    "put": indexing.put, "nonzero": nonzero, "searchsorted": searchsorted,
    "fill": lambda self, value: self.__setitem__(Ellipsis, value),
    "real": property(standard.real, doc=standard.real.__doc__),
    "imag": property(standard.imag, doc=standard.imag.__doc__),
    "conj": standard.conj, "conjugate": standard.conj,
    "__contains__": lambda self, value: bool((self == value).any()),
    # elementwise, torch's names for NumPy's
    "absolute": elementwise.abs, "acos": elementwise.arccos, "acosh": elementwise.arccosh,
    "asin": elementwise.arcsin, "asinh": elementwise.arcsinh, "atan": elementwise.arctan,
    "atanh": elementwise.arctanh, "neg": elementwise.negative, "fix": elementwise.trunc,
    "sgn": elementwise.sign,
    "positive": elementwise.positive, "arctan2": elementwise.arctan2, "atan2": elementwise.arctan2,
    "add": lambda self, other, *, alpha=1: tc.scaled_sum(self, other, 1, alpha),
    "sub": lambda self, other, *, alpha=1: tc.scaled_sum(self, other, 1, -alpha),
    "subtract": lambda self, other, *, alpha=1: tc.scaled_sum(self, other, 1, -alpha),
    "mul": elementwise.multiply, "multiply": elementwise.multiply,
    "true_divide": elementwise.divide, "floor_divide": elementwise.floor_divide,
    "remainder": elementwise.remainder, "fmod": elementwise.fmod, "pow": elementwise.power,
    "float_power": elementwise.float_power, "eq": elementwise.equal, "ne": elementwise.not_equal,
    "not_equal": elementwise.not_equal, "lt": elementwise.less, "less": elementwise.less,
    "le": elementwise.less_equal, "less_equal": elementwise.less_equal, "gt": elementwise.greater,
    "greater": elementwise.greater, "ge": elementwise.greater_equal,
    "greater_equal": elementwise.greater_equal, "maximum": elementwise.maximum,
    "minimum": elementwise.minimum, "fmax": elementwise.fmax, "fmin": elementwise.fmin,
    "logical_and": elementwise.logical_and, "logical_or": elementwise.logical_or,
    "logical_xor": elementwise.logical_xor, "bitwise_and": elementwise.bitwise_and,
    "bitwise_or": elementwise.bitwise_or, "bitwise_xor": elementwise.bitwise_xor,
    "bitwise_not": elementwise.invert, "bitwise_left_shift": elementwise.left_shift,
    "bitwise_right_shift": elementwise.right_shift, "hypot": elementwise.hypot,
    "copysign": elementwise.copysign, "logaddexp": elementwise.logaddexp,
    "logaddexp2": elementwise.logaddexp2, "heaviside": elementwise.heaviside,
    "nextafter": elementwise.nextafter, "xlogy": special.xlogy,
    "igamma": special.gammainc, "igammac": special.gammaincc,
    "mvlgamma": lambda self, p: special.multigammaln(self, p),
    "logit": lambda self, eps=None: special.logit(
        self if eps is None else self.clip(eps, 1 - eps)),
    "rsqrt": lambda self: self.sqrt().reciprocal(),
    "frac": lambda self: self - self.trunc(),
    "ldexp": lambda self, other: self * elementwise.power(2.0, other),
    "lerp": lambda self, end, weight: self + weight * (end - self),
    "clamp": lambda self, min=None, max=None: self.clip(min, max),  # noqa: A002
    "clamp_min": lambda self, min: self.clip(min, None),  # noqa: A002
    "clamp_max": lambda self, max: self.clip(None, max),  # noqa: A002
    "isposinf": lambda self: self == math.inf, "isneginf": lambda self: self == -math.inf,
    "isreal": lambda self: full(self.shape, True, device=self.device),
    "angle": lambda self: elementwise.where(
        self < 0, math.pi, elementwise.where(self.isnan(), self, 0.0)),
    "conj_physical": standard.conj, "resolve_conj": Tensor.copy, "resolve_neg": Tensor.copy,
    "hardshrink": lambda self, lambd=0.5: elementwise.where(self.abs() > lambd, self, 0.0),
    "addcmul": lambda self, t1, t2, *, value=1: self + value * t1 * t2,
    "addcdiv": lambda self, t1, t2, *, value=1: self + value * t1 / t2,
    # products
    "matmul": matmul, "mm": matmul, "bmm": matmul, "mv": matmul, "inner": inner,
    "outer": outer, "ger": outer, "kron": kron, "cross": tc.cross,
    "vdot": lambda self, other: (self * other).sum(),
    "dist": lambda self, other, p=2: linalg.vector_norm(self - other, ord=p),
    "addmm": lambda self, m1, m2, *, beta=1, alpha=1: tc.scaled_sum(self, m1 @ m2, beta, alpha),
    "addmv": lambda self, m, v, *, beta=1, alpha=1: tc.scaled_sum(self, m @ v, beta, alpha),
    "addr": lambda self, v1, v2, *, beta=1, alpha=1:
        tc.scaled_sum(self, outer(v1, v2), beta, alpha),
    "baddbmm": lambda self, b1, b2, *, beta=1, alpha=1: tc.scaled_sum(self, b1 @ b2, beta, alpha),
    "addbmm": lambda self, b1, b2, *, beta=1, alpha=1:
        tc.scaled_sum(self, (b1 @ b2).sum(0), beta, alpha),
    # linear algebra
    "det": linalg.det, "logdet": tc.logdet, "slogdet": linalg.slogdet, "inverse": linalg.inv,
    "pinverse": lambda self, rcond=1e-15: linalg.pinv(self, rcond),
    "matrix_power": linalg.matrix_power, "qr": lambda self, some=True: linalg.qr(
        self, "reduced" if some else "complete"), "svd": tc.svd,
    "cholesky_solve": lambda self, factor, upper=False:
        scipy_linalg.cho_solve((factor, not upper), self),
    "cholesky_inverse": lambda self, upper=False: scipy_linalg.cho_solve(
        (self, not upper), Tensor(np.eye(self.shape[-1]), self.dtype, self.device)),
    "norm": tc.norm, "adjoint": lambda self: self.mT,
    "H": property(tc.t, doc="The transpose of a matrix (real: no conjugate)."),
    "mH": property(lambda self: self.mT, doc="The last two axes swapped (real: mT)."),
    # reductions and statistics, under dim/keepdim
    "amax": _reduce(reductions.max), "amin": _reduce(reductions.min),
    "nansum": _reduce(reductions.nansum), "nanmean": _reduce(reductions.nanmean),
    "count_nonzero": lambda self, dim=None: count_nonzero(self, tc.axes_of(dim)),
    "aminmax": lambda self, *, dim=None, keepdim=False: tc.MinMax(
        self.min(dim, keepdim), self.max(dim, keepdim)),
    "quantile": lambda self, q, dim=None, keepdim=False, *, interpolation="linear":
        quantile(self, q, dim, interpolation, keepdim),
    "nanquantile": lambda self, q, dim=None, keepdim=False, *, interpolation="linear":
        nanquantile(self, q, dim, interpolation, keepdim),
    "topk": tc.topk, "kthvalue": tc.kthvalue,
    "msort": lambda self: take_along_axis(self, self.argsort(0, stable=True), 0),
    "softmax": lambda self, dim, dtype=None: softmax(
        self if dtype is None else self.astype(dtype), dim),
    "log_softmax": lambda self, dim, dtype=None: log_softmax(
        self if dtype is None else self.astype(dtype), dim),
    "cov": lambda self, *, correction=1, fweights=None, aweights=None: cov(
        self, ddof=correction, fweights=fweights, aweights=aweights),
    "corrcoef": corrcoef, "bincount": bincount, "histc": tc.histc,
    "histogram": lambda self, bins, *, range=None, weight=None, density=False:  # noqa: A002
        histogram(self, bins, range, density, weight),
    "unique": lambda self, sorted=True, return_inverse=False, return_counts=False,  # noqa: A002
        dim=None: unique(self, return_inverse=return_inverse,
                         return_counts=return_counts, axis=dim),
    "argwhere": argwhere,
    # shapes and indexing
    "dim": lambda self: self.ndim, "ndimension": lambda self: self.ndim,
    "numel": lambda self: math.prod(self.shape), "nelement": lambda self: math.prod(self.shape),
    "element_size": lambda self: self.itemsize, "expand": tc.expand,
    "expand_as": lambda self, other: self.broadcast_to(other.shape), "view": tc.view,
    "view_as": lambda self, other: self.reshape(other.shape),
    "reshape_as": lambda self, other: self.reshape(other.shape),
    "unsqueeze": lambda self, dim: self.expand_dims(dim), "t": tc.t,
    "movedim": shaping.moveaxis, "swapdims": shaping.swapaxes, "narrow": tc.narrow,
    "select": tc.select, "unflatten": tc.unflatten, "split": tc.split, "chunk": tc.chunk,
    "tensor_split": lambda self, indices_or_sections, dim=0: tuple(
        array_split(self, indices_or_sections, dim)),
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "unbind": lambda self, dim=0: standard.unstack(self, axis=dim),
    "tile": tile, "repeat_interleave": lambda self, repeats, dim=None:
        shaping.repeat(self, repeats, dim), "flipud": flipud, "fliplr": fliplr,
    "rot90": lambda self, k=1, dims=(0, 1): rot90(self, k, dims),
    "diag": lambda self, diagonal=0: diag(self, diagonal),
    "diagflat": lambda self, offset=0: diag(self.ravel(), offset),
    "gather": tc.gather, "take_along_dim": lambda self, indices, dim=None:
        take_along_axis(self, indices, dim), "index_select":
        lambda self, dim, index: self.take(index, dim), "masked_fill": tc.masked_fill,
    "masked_select": tc.masked_select, "masked_scatter": tc.masked_scatter,
    "scatter": tc.scatter, "scatter_add": tc.scatter_add,
    "div": tc.div, "divide": tc.div, "renorm": tc.renorm, "prelu": tc.prelu,
    "unfold": tc.unfold, "diagonal_scatter": tc.diagonal_scatter, "diag_embed": tc.diag_embed,
    "select_scatter": tc.select_scatter, "slice_scatter": tc.slice_scatter,
    "unique_consecutive": tc.unique_consecutive, "narrow_copy": tc.narrow,
    "split_with_sizes": tc.split, "unsafe_split": tc.split,
    "unsafe_split_with_sizes": tc.split, "unsafe_chunk": tc.chunk,
    "retains_grad": property(lambda self: not self.is_leaf and self._node is not None
                             and getattr(self._node, "retained", None) is not None),
    "index_add": tc.index_add, "index_copy": tc.index_copy, "index_fill": tc.index_fill,
    "sum_to_size": lambda self, *size: self._sum_to_shape(_shape_arg(size)),
    # dtypes, devices and queries
    "float": _cast(dtypes.float32), "double": _cast(dtypes.float64),
    "int": _cast(dtypes.int32), "long": _cast(dtypes.int64), "short": _cast(dtypes.int16),
    "char": _cast(dtypes.int8), "byte": _cast(dtypes.uint8), "bool": _cast(dtypes.bool_),
    "type_as": lambda self, other: self.astype(other.dtype),
    "is_floating_point": lambda self: self.dtype.kind == "f",
    "is_complex": lambda self: False, "is_conj": lambda self: False,
    "is_neg": lambda self: False, "is_signed": lambda self: self.dtype.kind in "if",
    "is_contiguous": lambda self, memory_format=None: True,
    "contiguous": lambda self, memory_format=None: self,
    "is_same_size": lambda self, other: self.shape == other.shape,
    "is_nonzero": lambda self: bool(self), "equal": lambda self, other: (
        self.shape == other.shape and bool((self == other).all())),
    "is_cuda": property(lambda self: self.device.type == "cuda"),
    "is_cpu": property(lambda self: self.device.type == "cpu"),
    "get_device": lambda self: -1 if self.device.type == "cpu" else self.device.index,
    "new_zeros": lambda self, *size, dtype=None, device=None, requires_grad=False: full(
        _shape_arg(size), 0, dtype or self.dtype, device or self.device, requires_grad),
    "new_ones": lambda self, *size, dtype=None, device=None, requires_grad=False: full(
        _shape_arg(size), 1, dtype or self.dtype, device or self.device, requires_grad),
    "new_empty": lambda self, *size, dtype=None, device=None, requires_grad=False: full(
        _shape_arg(size), 0, dtype or self.dtype, device or self.device, requires_grad),
    "new_full": lambda self, size, fill_value, *, dtype=None, device=None,
        requires_grad=False: full(size, fill_value, dtype or self.dtype,
                                  device or self.device, requires_grad),
}
"""Tensor's methods from `numpy.ndarray` and `torch.Tensor`, each to its function."""


def _in_place(name: str):
    def method(self, *args, **kwargs):
        return self._rebind(getattr(self, name)(*args, **kwargs))
    method.__name__ = name + "_"
    method.__doc__ = f"``{name}`` in place: this tensor gets the result (as ``x += 1``)."
    return method


IN_PLACE = """abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr arccos arccosh
    arcsin arcsinh arctan2 arctan arctanh asin asinh atan2 atan atanh baddbmm bitwise_and
    bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor ceil clamp
    clamp_max clamp_min clip conj_physical copysign cos cosh cumprod cumsum deg2rad digamma
    div divide eq erf erfc erfinv exp2 exp expm1 fix float_power floor floor_divide fmod frac
    ge greater greater_equal gt heaviside hypot i0 igamma igammac index_add index_copy
    index_fill index_put ldexp le lerp less less_equal lgamma log10 log1p log2 log
    logical_and logical_not logical_or logical_xor logit lt masked_fill masked_scatter mul
    multiply mvlgamma nan_to_num ne neg negative nextafter not_equal polygamma pow rad2deg
    reciprocal relu remainder renorm round rsqrt scatter scatter_add sgn sigmoid sign sin sinc
    sinh sqrt square sub subtract tan tanh tril triu true_divide trunc xlogy""".split()
"""The out-of-place names whose in-place ``name_`` torch has: each keeps the shape."""


def bind() -> None:
    """Give `Tensor` the methods of `METHODS` and the in-place forms (`IN_PLACE`, and
    ``zero_``, ``fill_``, ``copy_``, ``put_``, ``fill_diagonal_``)."""
    extra = {
        "zero_": lambda self: self._rebind(self.zeros_like()),
        "fill_": lambda self, value: self.fill(value) or self,
        "copy_": lambda self, src, non_blocking=False: self.__setitem__(Ellipsis, src) or self,
        "put_": tc.put_, "fill_diagonal_": tc.fill_diagonal_,
    }
    added = {**METHODS, **{name + "_": _in_place(name) for name in IN_PLACE}, **extra}
    for name, value in added.items():
        if any(name in vars(base) for base in Tensor.__mro__):
            raise RuntimeError(f"the method table's {name!r} would hide Tensor's own")
        setattr(Tensor, name, value)
