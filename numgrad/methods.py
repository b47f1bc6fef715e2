"""Tensor's methods that are numgrad functions: one table binds them when numgrad is
imported.

- ``numpy.ndarray``'s methods that NumPy's functions of the same names implement:
  ``t.take(...)`` is ``ng.take(t, ...)``, as ``a.take`` is ``np.take(a, ...)``.
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
leaves out, each with its reason.
"""

from __future__ import annotations

import math

import numpy as np

from numgrad import dtypes, functions, linalg, standard
from numgrad import torch_composites as tc
from numgrad.assembly import (
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
from numgrad.creation import full
from numgrad.linalg.products import inner, kron, matmul, outer
from numgrad.nn.functional import log_softmax, softmax
from numgrad.primitives import _shape_arg
from numgrad.scipy import linalg as scipy_linalg
from numgrad.scipy import special
from numgrad.searching import argwhere, bincount, histogram, nonzero, searchsorted, unique
from numgrad.statistics import corrcoef, count_nonzero, cov, nanquantile, quantile
from numgrad.tensor import Tensor
from numgrad.tensor_math import where


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
    # numpy.ndarray's, from NumPy's functions
    "take": functions.take, "compress": lambda self, condition, axis=None:
        functions.compress(condition, self, axis), "choose": functions.choose,
    "put": functions.put, "nonzero": nonzero, "searchsorted": searchsorted,
    "fill": lambda self, value: self.__setitem__(Ellipsis, value),
    "real": property(standard.real, doc=standard.real.__doc__),
    "imag": property(standard.imag, doc=standard.imag.__doc__),
    "conj": standard.conj, "conjugate": standard.conj,
    "__contains__": lambda self, value: bool((self == value).any()),
    # elementwise, torch's names for NumPy's
    "absolute": Tensor.abs, "acos": Tensor.arccos, "acosh": Tensor.arccosh,
    "asin": Tensor.arcsin, "asinh": Tensor.arcsinh, "atan": Tensor.arctan,
    "atanh": Tensor.arctanh, "neg": Tensor.negative, "fix": Tensor.trunc, "sgn": Tensor.sign,
    "positive": functions.positive, "arctan2": functions.arctan2, "atan2": functions.arctan2,
    "add": lambda self, other, *, alpha=1: tc.scaled_sum(self, other, 1, alpha),
    "sub": lambda self, other, *, alpha=1: tc.scaled_sum(self, other, 1, -alpha),
    "subtract": lambda self, other, *, alpha=1: tc.scaled_sum(self, other, 1, -alpha),
    "mul": functions.multiply, "multiply": functions.multiply,
    "true_divide": functions.divide, "floor_divide": functions.floor_divide,
    "remainder": functions.remainder, "fmod": functions.fmod, "pow": functions.power,
    "float_power": functions.float_power, "eq": functions.equal, "ne": functions.not_equal,
    "not_equal": functions.not_equal, "lt": functions.less, "less": functions.less,
    "le": functions.less_equal, "less_equal": functions.less_equal, "gt": functions.greater,
    "greater": functions.greater, "ge": functions.greater_equal,
    "greater_equal": functions.greater_equal, "maximum": functions.maximum,
    "minimum": functions.minimum, "fmax": functions.fmax, "fmin": functions.fmin,
    "logical_and": functions.logical_and, "logical_or": functions.logical_or,
    "logical_xor": functions.logical_xor, "bitwise_and": functions.bitwise_and,
    "bitwise_or": functions.bitwise_or, "bitwise_xor": functions.bitwise_xor,
    "bitwise_not": Tensor.invert, "bitwise_left_shift": functions.left_shift,
    "bitwise_right_shift": functions.right_shift, "hypot": functions.hypot,
    "copysign": functions.copysign, "logaddexp": functions.logaddexp,
    "logaddexp2": functions.logaddexp2, "heaviside": functions.heaviside,
    "nextafter": functions.nextafter, "xlogy": special.xlogy,
    "igamma": special.gammainc, "igammac": special.gammaincc,
    "mvlgamma": lambda self, p: special.multigammaln(self, p),
    "logit": lambda self, eps=None: special.logit(
        self if eps is None else self.clip(eps, 1 - eps)),
    "rsqrt": lambda self: self.sqrt().reciprocal(),
    "frac": lambda self: self - self.trunc(),
    "ldexp": lambda self, other: self * functions.power(2.0, other),
    "lerp": lambda self, end, weight: self + weight * (end - self),
    "clamp": lambda self, min=None, max=None: self.clip(min, max),  # noqa: A002
    "clamp_min": lambda self, min: self.clip(min, None),  # noqa: A002
    "clamp_max": lambda self, max: self.clip(None, max),  # noqa: A002
    "isposinf": lambda self: self == math.inf, "isneginf": lambda self: self == -math.inf,
    "isreal": lambda self: full(self.shape, True, device=self.device),
    "angle": lambda self: where(self < 0, math.pi, where(self.isnan(), self, 0.0)),
    "conj_physical": standard.conj, "resolve_conj": Tensor.copy, "resolve_neg": Tensor.copy,
    "hardshrink": lambda self, lambd=0.5: where(self.abs() > lambd, self, 0.0),
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
    "amax": _reduce(Tensor.max), "amin": _reduce(Tensor.min),
    "nansum": _reduce(functions.nansum), "nanmean": _reduce(functions.nanmean),
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
    "movedim": Tensor.moveaxis, "swapdims": Tensor.swapaxes, "narrow": tc.narrow,
    "select": tc.select, "unflatten": tc.unflatten, "split": tc.split, "chunk": tc.chunk,
    "tensor_split": lambda self, indices_or_sections, dim=0: tuple(
        array_split(self, indices_or_sections, dim)),
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "unbind": lambda self, dim=0: standard.unstack(self, axis=dim),
    "tile": tile, "repeat_interleave": lambda self, repeats, dim=None:
        functions.repeat(self, repeats, dim), "flipud": flipud, "fliplr": fliplr,
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
