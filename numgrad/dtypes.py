"""The dtypes numgrad supports and their promotion (NumPy 2 rules, weak Python scalars)."""

from __future__ import annotations

import numpy as np

bool_ = np.dtype(np.bool_)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)

SUPPORTED = (bool_, int32, int64, float32, float64)
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


def to_float(dtype: np.dtype) -> np.dtype:
    """The dtype a floating function (exp, divide, mean, ...) computes in.

    NumPy gives float64 for integers and float16 for bool; numgrad has no float16,
    so bool also gives float64.
    """
    return dtype if is_float(dtype) else float64


#: The Python type of each supported dtype's NumPy scalars
_PYTHON = {np.bool_: bool, np.int32: int, np.int64: int, np.float32: float, np.float64: float}


def python_scalar(value: np.generic) -> bool | int | float:
    """A NumPy scalar of a supported dtype as the Python scalar ``value.item()`` gives,
    converted directly: NumPy 2's ``item`` costs 0.2-0.4 us on a scalar, ten times as
    much (a scalar loop reads one per constant)."""
    return _PYTHON[type(value)](value)
