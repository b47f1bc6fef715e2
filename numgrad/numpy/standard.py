"""The Python Array API standard's (2024.12) names for what numgrad has under NumPy's
classic ones, and its dtype functions: code written against the standard, or NumPy 2's
new spellings (``acos``, ``concat``, ``permute_dims``, ``unique_counts``), runs as it is.

The dtype functions answer as NumPy's do for numgrad's dtypes (they are NumPy's dtypes);
a tensor stands for its dtype. `result_type` follows numgrad's promotion, NumPy 2's with
weak Python scalars.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from numgrad import dtypes
from numgrad.device import Device, as_device, cuda_is_available, get_default_device
from numgrad.numpy.creation import tensor
from numgrad.numpy.elementwise import (
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    invert,
    left_shift,
    power,
    right_shift,
)
from numgrad.numpy.joining import concatenate
from numgrad.numpy.searching import unique
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor

__all__ = ["__array_api_version__", "__array_namespace_info__", "acos", "acosh", "asarray",
           "asin", "asinh", "astype", "atan", "atan2", "atanh", "bitwise_invert",
           "bitwise_left_shift", "bitwise_right_shift", "can_cast", "concat", "conj",
           "conjugate", "finfo", "iinfo", "imag", "isdtype", "matrix_transpose",
           "permute_dims", "pow", "real", "result_type", "unique_all", "unique_counts",
           "unique_inverse", "unique_values", "unstack", "vecdot"]

acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh
atan, atan2, atanh, pow = arctan, arctan2, arctanh, power  # noqa: A001 - the standard's
bitwise_invert, bitwise_left_shift, bitwise_right_shift = invert, left_shift, right_shift


def concat(arrays, /, *, axis: int | None = 0) -> Tensor:
    """`concatenate`; ``axis=None`` joins the flattened arrays."""
    return concatenate(arrays, axis=axis)


def permute_dims(x: Tensor, /, axes: tuple[int, ...]) -> Tensor:
    return asarray(x).transpose(axes)


def matrix_transpose(x: Tensor, /) -> Tensor:
    """The last two axes swapped (``x.mT``)."""
    return asarray(x).mT


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of `x1` and `x2` along `axis`, broadcast over the other axes
    (real dtypes: no conjugate to take), in their promoted dtype (int32 stays int32, as
    NumPy's ``vecdot``). Their lengths along `axis` must be equal: that axis is not
    broadcast (ValueError)."""
    x1, x2 = asarray(x1), asarray(x2)
    ndim = max(x1.ndim, x2.ndim)
    along = normalize_axis(axis, ndim)
    n1, n2 = ((1,) * (ndim - x.ndim) + x.shape for x in (x1, x2))
    if n1[along] != n2[along]:
        raise ValueError(f"vecdot: the lengths along axis {axis} differ ({n1[along]} and "
                         f"{n2[along]} in shapes {x1.shape} and {x2.shape})")
    return (x1 * x2).sum(axis=along, dtype=result_type(x1, x2))


def conj(x: Tensor, /) -> Tensor:
    """The complex conjugate: for numgrad's real dtypes, `x`'s value (a new tensor whose
    gradient flows back, `Tensor.copy`); bools become int8, as NumPy's ``conjugate``
    gives them."""
    x = asarray(x)
    return x.astype(dtypes.int8) if x.dtype == dtypes.bool_ else x.copy()


conjugate = conj


def real(x: Tensor, /) -> Tensor:
    """The real part: for numgrad's real dtypes, `x`'s value (a new tensor whose gradient
    flows back, `Tensor.copy`)."""
    return asarray(x).copy()


def imag(x: Tensor, /) -> Tensor:
    """The imaginary part: for numgrad's real dtypes, zeros of `x`'s dtype and shape (on
    its device), with no gradient to carry."""
    x = asarray(x)
    return x.zeros_like()


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of `x` along `axis`, as a tuple (the inverse of `stack`): ``x[:, i]``
    for ``axis=1``, the other axes in their order."""
    x = asarray(x)
    return tuple(x.moveaxis(axis, 0)) if x.ndim else ()


def asarray(obj, /, *, dtype=None, device=None, copy: bool | None = None) -> Tensor:
    """`obj` as a tensor: a tensor itself when it already is one of that dtype and
    device (``copy=True``: a new tensor, `Tensor.copy`), else `numgrad.tensor` of it
    (``copy=False``: no copy, or ValueError). A tensor's history is kept either way:
    its gradient flows back through the result (libraries written for the standard
    copy before they change an array in place, as SciPy's ``logsumexp`` does)."""
    if isinstance(obj, Tensor):
        moved = obj.to(device, dtype)
        if moved is obj:
            return obj.copy() if copy else obj
        if copy is False:
            return tensor(obj, dtype=dtype, device=device, copy=False)  # (raises: says why)
        return moved
    return tensor(obj, dtype=dtype, device=device, copy=copy)


def astype(x: Tensor, dtype, /, *, copy: bool = True, device=None) -> Tensor:
    """`x` as `dtype` (on `device`, if given); with ``copy=False``, `x` itself when
    nothing changes."""
    converted = x.to(device, dtype)
    return converted.copy() if copy and converted is x else converted


def _dtype(x) -> np.dtype:
    return x.dtype if isinstance(x, Tensor) else dtypes.as_dtype(x)


class FloatInfo:
    """Machine limits of a floating dtype (`finfo`): the standard's attributes as Python
    numbers (``bits`` an int; ``eps``, ``max``, ``min``, ``smallest_normal`` floats) and
    ``dtype``; NumPy's other ones (``tiny``, ``resolution``, ``precision``, ...) as
    NumPy's ``finfo`` gives them."""

    def __init__(self, info: np.finfo):
        self._numpy = info
        self.bits, self.dtype = int(info.bits), info.dtype
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.smallest_normal = float(info.smallest_normal)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_numpy":
            raise AttributeError(name)
        return getattr(self._numpy, name)

    def __repr__(self) -> str:
        return (f"finfo(bits={self.bits}, eps={self.eps!r}, max={self.max!r}, "
                f"min={self.min!r}, smallest_normal={self.smallest_normal!r}, "
                f"dtype={self.dtype.name})")


def finfo(type, /) -> FloatInfo:  # noqa: A002 - the standard's name
    """Machine limits of a floating dtype (or a tensor's): NumPy's ``finfo``, with the
    standard's attributes as Python floats (`FloatInfo`)."""
    return FloatInfo(np.finfo(_dtype(type)))


def iinfo(type, /) -> np.iinfo:  # noqa: A002 - the standard's name
    """Machine limits of an integer dtype (or a tensor's): NumPy's ``iinfo``."""
    return np.iinfo(_dtype(type))


def can_cast(from_, to, /) -> bool:
    """Whether `from_` (a dtype or a tensor) casts to `to` by the standard's (NumPy's
    "safe") rules."""
    return bool(np.can_cast(_dtype(from_), dtypes.as_dtype(to)))


def isdtype(dtype, kind) -> bool:
    """Whether `dtype` is of `kind`: a dtype, a kind name (``"real floating"``,
    ``"integral"``, ...) or a tuple of them (NumPy's ``isdtype``)."""
    return bool(np.isdtype(dtypes.as_dtype(dtype), kind))


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype an operation on `arrays_and_dtypes` gives: tensors by their dtype,
    Python scalars weakly (NumPy 2's promotion, numgrad's)."""
    parts = [a.dtype if isinstance(a, Tensor) else
             a if isinstance(a, (bool, int, float)) else dtypes.as_dtype(a)
             for a in arrays_and_dtypes]
    return np.result_type(*parts)


class UniqueAll(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCounts(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverse(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def unique_values(x: Tensor, /) -> Tensor:
    return unique(x)


def unique_counts(x: Tensor, /) -> UniqueCounts:
    return UniqueCounts(*unique(x, return_counts=True))


def unique_inverse(x: Tensor, /) -> UniqueInverse:
    values, inverse = unique(x, return_inverse=True)
    return UniqueInverse(values, inverse.reshape(asarray(x).shape))


def unique_all(x: Tensor, /) -> UniqueAll:
    values, indices, inverse, counts = unique(x, return_index=True, return_inverse=True,
                                              return_counts=True)
    return UniqueAll(values, indices, inverse.reshape(asarray(x).shape), counts)


# ---- the namespace's own description ----------------------------------------------

#: the version of the standard numgrad's namespace follows (``t.__array_namespace__()``)
__array_api_version__ = "2024.12"
#: the versions `Tensor.__array_namespace__` answers for: each one's names are numgrad's
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

_KINDS = {"bool": "bool", "real floating": "real floating", "integral": "integral",
          "signed integer": "signed integer", "unsigned integer": "unsigned integer",
          "numeric": "numeric", "complex floating": "complex floating"}


class Info:
    """What the namespace holds (`__array_namespace_info__`): its capabilities, devices
    and dtypes. numgrad has no complex dtypes: `dtypes` lists the ones it has."""

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent shapes (``nonzero``, ``unique``) are
        there, and NumPy's 64 dimensions (a compiled CPU kernel loops over at most
        `numgrad.kernels.cpu.MAX_LOOPS` dimensions its layout could not merge; deeper
        launches run on the interpreter)."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self) -> Device:
        """The device creation functions use when given none (`numgrad.set_default_device`)."""
        return get_default_device()

    def default_dtypes(self, *, device=None) -> dict:
        """float64 and int64, on every device (a complex default has no dtype to name:
        None)."""
        if device is not None:
            as_device(device)  # (a bad device is an error)
        return {"real floating": dtypes.float64, "complex floating": None,
                "integral": dtypes.int64, "indexing": dtypes.int64}

    def devices(self) -> list[Device]:
        """The CPU, and the GPU where CUDA is there."""
        return [as_device("cpu")] + ([as_device("cuda")] if cuda_is_available() else [])

    def dtypes(self, *, device=None, kind=None) -> dict:
        """numgrad's dtypes by name (the same on every device), those of `kind` (a kind
        name or a tuple of them, as `isdtype` takes) if given."""
        if device is not None:
            as_device(device)
        return {d.name: d for d in dtypes.SUPPORTED if kind is None or isdtype(d, kind)}


def __array_namespace_info__() -> Info:
    """The standard's inspection object for this namespace (`Info`)."""
    return Info()
