"""The dtypes numgrad supports and their promotion (NumPy 2 rules, weak Python scalars)."""

from __future__ import annotations

import numpy as np

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)

SUPPORTED = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32,
             float64)
#: Each dtype's name (``np.dtype.name`` is slow enough to matter when scheduling).
NAMES = {d: d.name for d in SUPPORTED}
_NAMES = ", ".join(d.name for d in SUPPORTED)


def as_dtype(dtype) -> np.dtype:
    """Return the supported NumPy dtype for `dtype` (a NumPy dtype, type or name)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unsupported dtype {dtype!r}; expected one of {_NAMES}") from None
    if dt not in SUPPORTED:
        raise TypeError(f"unsupported dtype {dt.name}; expected one of {_NAMES}")
    return dt


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def result_type(*operands) -> np.dtype:
    """Promote tensor dtypes and Python scalars the way NumPy 2 does.

    Python scalars are weak: they take the tensor's kind where they fit it
    (``float32 * 2.0`` stays float32, ``int32 + 2`` stays int32). The result
    depends on the scalars' types only, so it is cached by them (this runs for
    every recorded operation).
    """
    key = tuple(o if isinstance(o, np.dtype) else type(o) for o in operands)
    dtype = _promotions.get(key)
    if dtype is None:
        dtype = _promotions[key] = as_dtype(np.result_type(*operands))
    return dtype


_promotions: dict[tuple, np.dtype] = {}


def mix_signs(*operands: np.dtype) -> bool:
    """Whether `operands` are uint64 and a signed integer, which NumPy 2 compares exactly
    though their common dtype is float64."""
    return uint64 in operands and any(d.kind == "i" for d in operands)


def to_float(dtype: np.dtype) -> np.dtype:
    """The dtype a statistic or a decomposition (mean, var, median, norms, solve, ...)
    computes in: float64 for integers and bools, as NumPy's."""
    return dtype if is_float(dtype) else float64


def ufunc_float(dtype: np.dtype) -> np.dtype:
    """The dtype of a floating elementwise function (exp, divide, ...) of `dtype`, as
    NumPy's ufuncs give: float32 for int16 and uint16, float64 for 32- and 64-bit
    integers. NumPy gives float16 for int8, uint8 and bool; numgrad has no float16, so
    int8 and uint8 give float32 (the least float it has that holds every one of them)
    and bool float64 (as before int8 came)."""
    if is_float(dtype):
        return dtype
    return float32 if dtype.kind in "iu" and dtype.itemsize <= 2 else float64


def accumulated(dtype: np.dtype) -> np.dtype:
    """The dtype a sum, a product or a scan of `dtype` accumulates in when given none,
    as NumPy's: int64 for bools and signed integers, uint64 for unsigned ones, floats
    their own."""
    return uint64 if dtype.kind == "u" else int64 if dtype.kind in "bi" else dtype


#: The Python type of each supported dtype's NumPy scalars
_PYTHON = {np.bool_: bool, np.int8: int, np.int16: int, np.int32: int, np.int64: int,
           np.uint8: int, np.uint16: int, np.uint32: int, np.uint64: int,
           np.float32: float, np.float64: float}


def python_scalar(value: np.generic) -> bool | int | float:
    """A NumPy scalar of a supported dtype as the Python scalar ``value.item()`` gives,
    converted directly: NumPy 2's ``item`` costs 0.2-0.4 us on a scalar, ten times as
    much (a scalar loop reads one per constant)."""
    return _PYTHON[type(value)](value)
