"""Views a prepared plan makes again at every replay (`numgrad.plan.prepared`): how a
launch's view of an array is described once (`spec_of`), from which array of the plan
it is best made (`read_at`), and how it is made from a new array of that layout
(`make_view`), as the eager launch made it (the same array type, for a compiled kernel
called unchecked)."""

from __future__ import annotations

import numpy as np


class Unsupported(Exception):
    """A plan (or one of its views) that a prepared plan does not handle."""


def layout(array) -> tuple:
    """What of `array` Numba's type of it holds, beyond its dtype and dimensions (which
    the plan's structure fixes)."""
    flags = array.flags
    return array.strides, flags.writeable, flags.aligned


def is_view(result, base) -> bool:
    """Whether `result` is a view into `base`'s memory."""
    return isinstance(base, np.ndarray) and isinstance(result, np.ndarray) and \
        result.base is not None and np.shares_memory(result, base)


def spec_of(view, base) -> tuple:
    """How to make `view` again from another array laid out as `base`: its shape,
    strides and offset (in elements), and whether it is `base` itself ("same"), a
    reshape of it ("reshape": C-contiguous, the same elements), another view of a
    C-contiguous base ("window": NumPy's ndarray constructor, a fifth of the time
    `backend.as_strided` takes to find that it can use it) or none of these
    ("strided"). Each keeps the view's array type (layout, writability)."""
    if not isinstance(base, np.ndarray) or not isinstance(view, np.ndarray):
        raise Unsupported
    offset = _address(view) - _address(base) if view.size else 0
    if offset % view.itemsize or offset and not base.flags.c_contiguous:
        raise Unsupported
    spec = tuple(view.shape), tuple(view.strides), offset // view.itemsize
    if not offset and view.shape == base.shape and view.strides == base.strides:
        return *spec, "same"
    if not offset and view.flags.c_contiguous and base.flags.c_contiguous and \
            view.size == base.size:
        return *spec, "reshape"
    if base.flags.c_contiguous and view.flags.writeable == base.flags.writeable:
        try:
            make_view(None, base, (*spec, "window"))
        except ValueError:  # (reaches outside `base`: negative strides, say)
            pass
        else:
            return *spec, "window"
    return *spec, "strided"


def read_at(view, slot: int, arrays: list, viewed: dict[int, int]) -> tuple[int, tuple]:
    """The slot to make `view` (of `slot`'s array) from, and how (`spec_of`): the array
    that the calls making `slot` as a view of another (`viewed`) start from, where
    `view` can be made from it; a view of a view (a transposed matrix) then costs
    one view of an array that is contiguous, and is made once while that array stays
    the same (`PreparedPlan.run`)."""
    spec = spec_of(view, arrays[slot])
    while slot in viewed:
        try:
            spec, slot = spec_of(view, arrays[viewed[slot]]), viewed[slot]
        except Unsupported:
            break
    return slot, spec


def make_view(backend, base, spec):
    """The view `spec` (`spec_of`) of `base`, made as an eager launch makes its views (so
    of the same array type)."""
    shape, strides, offset, how = spec
    if how == "same":
        return base
    if how == "reshape":
        return base.reshape(shape)
    if how == "window":
        return np.ndarray(shape, base.dtype, base, offset * base.itemsize, strides)
    if offset:
        base = base.reshape(-1)[offset:]
    return backend.as_strided(base, shape, strides, writeable=True)


def _address(array) -> int:
    return array.__array_interface__["data"][0]
