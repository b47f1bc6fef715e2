"""Arguments and results as trees: tensors at the leaves, everything else static.

`flatten` turns a call's arguments into their tensors (NumPy arrays become tensors)
and a hashable *spec*, the rest of the structure with static values in place; a
call's signature is the spec and each tensor's shape, dtype, device and
requires_grad. `unflatten` builds the arguments back around other tensors.
"""

from __future__ import annotations

import functools

import numpy as np

from numgrad.tensor import Tensor

#: A tensor's place in a spec.
LEAF = "<tensor>"


def flatten(obj, leaves: list, where: str = "argument"):
    """The spec of `obj`; its tensors are appended to `leaves`."""
    if isinstance(obj, Tensor):
        leaves.append(obj)
        return LEAF
    if isinstance(obj, np.ndarray):
        leaves.append(Tensor(obj))
        return LEAF
    kind = type(obj)
    if kind is tuple or kind is list:
        return kind, tuple([flatten(o, leaves, f"{where}[{i}]") for i, o in enumerate(obj)])
    if kind is dict:
        return dict, tuple(obj), tuple([flatten(v, leaves, f"{where}[{k!r}]")
                                        for k, v in obj.items()])
    try:
        hash(obj)
    except TypeError:
        raise TypeError(
            f"ng.jit: {where} is a {kind.__name__}, which is neither a tensor nor hashable; "
            f"non-tensor arguments are static (part of the signature, compared by value), "
            f"so they must be hashable") from None
    return kind, obj  # by type too: 1, 1.0 and True are equal but trace differently


@functools.cache
def tensors_spec(n: int) -> tuple:
    """The spec of ``(args, {})`` for `n` positional tensors (what `flatten` gives)."""
    return tuple, ((tuple, (LEAF,) * n), (dict, (), ()))


def unflatten(spec, leaves) -> object:
    """The object of `spec` with `leaves` (an iterator of tensors) at its leaves."""
    if spec is LEAF:
        return next(leaves)
    if spec is None:  # (a result's None; a static None is (NoneType, None))
        return None
    kind = spec[0]
    if kind is tuple or kind is list:
        return kind([unflatten(s, leaves) for s in spec[1]])
    if kind is dict:
        return {k: unflatten(s, leaves) for k, s in zip(spec[1], spec[2])}
    return spec[1]


def flatten_results(out, name: str) -> tuple[object, list]:
    """The spec and tensors of what a jitted function returned: a tensor, None, or
    tuples, lists and dicts of them (anything else is a TypeError)."""
    leaves: list = []

    def visit(obj, where):
        if isinstance(obj, Tensor):
            leaves.append(obj)
            return LEAF
        if obj is None:
            return None
        kind = type(obj)
        if kind is tuple or kind is list:
            return kind, tuple([visit(o, f"{where}[{i}]") for i, o in enumerate(obj)])
        if kind is dict:
            return dict, tuple(obj), tuple([visit(v, f"{where}[{k!r}]")
                                            for k, v in obj.items()])
        raise TypeError(
            f"ng.jit: '{name}' returned a {kind.__name__} at {where}; a jitted function "
            f"returns tensors, None, or tuples, lists and dicts of them (a value read "
            f"from a tensor cannot be replayed)")

    return visit(out, "the result"), leaves
