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
    `backend.as_strided` takes to find that it can use it), elements of a base that is
    itself a view, picked by indexing it ("indexed": its transposed column, the row of
    a broadcast column; a fifth of NumPy's ``as_strided``, which a view of a view needs
    otherwise) or none of these ("strided"). Each keeps the view's array type (layout,
    writability)."""
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
    indexed = _indexed(view, base) if not offset else None
    if indexed is not None:
        return *spec, "indexed", *indexed
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
    shape, strides, offset, how = spec[:4]
    if how == "same":
        return base
    if how == "reshape":
        return base.reshape(shape)
    if how == "window":
        return np.ndarray(shape, base.dtype, base, offset * base.itemsize, strides)
    if how == "indexed":
        return base[spec[4]].transpose(spec[5]).reshape(shape)
    if offset:
        base = base.reshape(-1)[offset:]
    return backend.as_strided(base, shape, strides, writeable=True)


def _indexed(view, base) -> tuple | None:
    """``(key, axes)`` such that ``base[key].transpose(axes).reshape(view.shape)`` is
    `view` (the same elements, strides and flags: the same array type), where each axis
    of `view` longer than 1 is an axis of `base` stepped through (`_step`), and
    `base`'s other axes are taken at 0; None where there is none."""
    key: list = [0] * base.ndim
    kept = []  # per axis of `view` longer than 1: the axis of `base` it is
    for n, stride in zip(view.shape, view.strides):
        if n == 1:
            continue
        found = next(((a, step) for a in range(base.ndim) if key[a] == 0 and
                      (step := _step(stride, base.strides[a], n, base.shape[a]))), None)
        if found is None:
            return None
        axis, step = found
        key[axis] = slice(0, (n - 1) * step + 1, step)
        kept.append(axis)
    order = sorted(kept)  # (indexing keeps `base`'s order of the axes it slices)
    key, axes = tuple(key), tuple(order.index(a) for a in kept)
    try:
        made = base[key].transpose(axes).reshape(view.shape)
    except ValueError:
        return None
    same = all(a == b for a, b, n in zip(made.strides, view.strides, view.shape) if n > 1)
    if not same or _address(made) != _address(view) or layout(made)[1:] != layout(view)[1:] \
            or made.flags.c_contiguous != view.flags.c_contiguous \
            or made.flags.f_contiguous != view.flags.f_contiguous:
        return None
    return key, axes


def _step(stride: int, base_stride: int, n: int, length: int) -> int:
    """The step along an axis of `length` and `base_stride` that gives `n` elements
    `stride` apart (a positive one), or 0 where none does."""
    if stride == base_stride:
        step = 1
    elif base_stride > 0 and stride > 0 and not stride % base_stride:
        step = stride // base_stride
    else:
        return 0
    return step if (n - 1) * step < length else 0


def _address(array) -> int:
    return array.__array_interface__["data"][0]
