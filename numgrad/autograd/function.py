"""Custom differentiable operations: subclass `Function`, call `MyFn.apply(...)`."""

from __future__ import annotations

import weakref

import numpy as np

import numgrad
from numgrad.autograd.grad_mode import is_grad_enabled, no_grad
from numgrad.autograd.graph import FunctionNode


class FunctionCtx:
    """What `forward` leaves for `backward`: saved tensors and which inputs need grad."""

    def __init__(self, needs_input_grad: tuple[bool, ...]):
        self.needs_input_grad = needs_input_grad
        self.saved: tuple = ()
        self._tensor_type = None
        self._output = None  # (buffer, weakref to the node) of forward's output

    def save_for_backward(self, *tensors) -> None:
        """Keep `tensors` (their values and history) for `backward`."""
        for i, t in enumerate(tensors):
            if t is not None and not hasattr(t, "_buf"):
                raise TypeError(
                    f"save_for_backward saves tensors (or None); argument {i} is a "
                    f"{type(t).__name__}: keep other values as attributes of ctx")
            if t is not None:
                self._tensor_type = type(t)
        self.saved = tuple(None if t is None else (t._buf, t._node) for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        if self.saved is None:
            raise RuntimeError(
                "the tensors saved for backward were freed after the first backward "
                "pass; pass retain_graph=True to backward through the graph again")
        return tuple(None if s is None else self._tensor_type._wrap(*self._history(*s))
                     for s in self.saved)

    def _history(self, buf, node):
        # forward's output, saved before it had history, gets its node (held weakly:
        # the node holds this ctx) so a backward that uses it differentiates again.
        if node is None and self._output is not None and buf is self._output[0]:
            node = self._output[1]()
        return buf, node


class Function:
    """Base class of custom operations.

    Subclasses define static ``forward(ctx, *args)``, which computes outputs from
    inputs (it runs without recording history), and ``backward(ctx, *grads)``,
    which returns one gradient (or None) per input of ``forward``. Written with
    numgrad operations, ``backward`` is itself differentiable.

    Examples
    --------
    >>> import numgrad as ng
    >>> class Cube(ng.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return g * 3 * x ** 2
    >>> x = ng.tensor(2.0, requires_grad=True)
    >>> Cube.apply(x).backward()
    >>> x.grad.item()
    12.0
    """

    @staticmethod
    def forward(ctx: FunctionCtx, *args, **kwargs):
        raise NotImplementedError("subclasses of Function define forward(ctx, *args)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads):
        raise NotImplementedError("subclasses of Function define backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run `forward` on `args` and record it; NumPy arrays among them become tensors
        (constants, on the device of the tensor arguments), as numgrad's own functions
        take them. Other arguments reach `forward` as they are."""
        like = next((a for a in args if hasattr(a, "_buf")), None)
        args = tuple(numgrad.tensor(a, device=like.device if like is not None else None)
                     if isinstance(a, np.ndarray) else a for a in args)
        is_tensor = [hasattr(a, "_buf") for a in args]
        ctx = FunctionCtx(tuple(t and a.requires_grad for t, a in zip(is_tensor, args)))
        with no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        if not hasattr(out, "_buf"):
            raise TypeError(
                f"{cls.__name__}.forward must return one Tensor, got {type(out).__name__}")
        if not (is_grad_enabled() and any(ctx.needs_input_grad)):
            return out
        nodes = tuple(a._node if t else None for t, a in zip(is_tensor, args))
        ctx._tensor_type = ctx._tensor_type or type(out)
        node = FunctionNode(cls, ctx, nodes)
        ctx._output = (out._buf, weakref.ref(node))
        return type(out)._wrap(out._buf, node)
