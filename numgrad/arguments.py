"""Static arguments described for keys: what of an operation's argument is structure
(axes, shapes, slices) and what is a value (an index array's contents), as the engine's
schedule keys (`numgrad.plan.schedules`), the backward recipes (`numgrad.plan.recipes`)
and the tapes (`numgrad.plan.tape`) read them."""

from __future__ import annotations

import numpy as np


class Unhashable(Exception):
    """A static argument of a kind `hashable` does not know: the graph is not keyed."""


#: the kinds of argument that `hashable` converts, inside a tuple too
_CONVERTED = (slice, tuple)


def hashable(arg):
    """`arg` as a hashable value: slices as tuples, index arrays as their dtype and
    shape (their contents are values, rebound like constants'); `Unhashable` for a
    kind it does not know. (Told by type first: an indexing key holds slices, and a
    failed ``hash`` raises, which costs a microsecond.)"""
    kind = type(arg)
    if kind is tuple:
        for a in arg:
            if type(a) in _CONVERTED or isinstance(a, np.ndarray):
                return tuple([hashable(a) for a in arg])
    elif kind is slice:
        return ("slice", arg.start, arg.stop, arg.step)
    elif isinstance(arg, np.ndarray):
        return ("array", arg.dtype.str, arg.shape)
    try:
        hash(arg)
    except TypeError:
        raise Unhashable from None
    return arg


def holds_array(arg) -> bool:
    """Whether `arg` (a static argument) holds an array (an index array's contents)."""
    return isinstance(arg, np.ndarray) or isinstance(arg, tuple) and any(map(holds_array, arg))
