"""One key: how numgrad describes a recorded operation by its structure.

A node's structure is its operation, static argument, shape, dtype, device type and
number of sources. A constant's value, a computed buffer's contents and an index
array's contents are not structure (each remembering layer binds them anew: they
never split a cache), so two runs of the same code on new values describe their nodes
alike. Each description is numbered once (`signature`) and the number kept on the
buffer (``LazyBuffer.sig``), so the keys of the engine's reused schedules
(`numgrad.plan.schedules`), of a thread's tape (`numgrad.plan.tape`) and of backward
recipes (`numgrad.plan.recipes`) are flat tuples of integers, cheap to hash and
compare, and a node described by one of them costs the others nothing.
"""

from __future__ import annotations

import itertools

from numgrad.arguments import Unhashable, hashable
from numgrad.ops import CONST


def signature(op, arg, shape, dtype, device, arity: int) -> int:
    """The number of a node's structure, less its sources' identities: its operation,
    static argument (not a constant's value; index arrays by dtype and shape,
    `numgrad.arguments.hashable`), shape, dtype, device type and number of sources; -1
    if the argument is of a kind `hashable` does not know."""
    try:
        arg = None if op.kind == CONST or arg is None else hashable(arg)
    except Unhashable:
        return -1
    return intern((op.name, arg, shape, dtype, device.type, arity))


def signature_of(buf) -> int:
    """`signature` of the pending buffer `buf`, found once and kept on it."""
    sig = buf.sig
    if sig is None:
        sig = buf.sig = signature(buf.op, buf.arg, buf.shape, buf.dtype, buf.device,
                                  len(buf.srcs))
    return sig


#: Descriptions numbered so far. Numbers are never reused: when the table is full it is
#: emptied, and a description seen again gets a new number (a node that kept the old
#: one then keys a plan that no new graph matches, which is only a miss).
_numbers: dict[tuple, int] = {}
_next_number = itertools.count()
MAX_NUMBERS = 1 << 16


def intern(description: tuple) -> int:
    """The number of `description` (a hashable tuple)."""
    number = _numbers.get(description)
    if number is None:
        if len(_numbers) >= MAX_NUMBERS:
            _numbers.clear()
        number = _numbers[description] = next(_next_number)
    return number
