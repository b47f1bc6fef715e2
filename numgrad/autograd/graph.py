"""Nodes of the autograd graph: an operation's VJP and edges to its inputs' nodes.

A node keeps what its VJP needs as (buffer, node) pairs rather than Tensors, and
rebuilds Tensors (of the incoming gradient's class) when it runs. So the graph
holds no Tensor, and ``x.grad`` with history never closes a reference cycle
through ``x``: a leaf is reached through `AccumulateGrad`, which holds it weakly.
"""

from __future__ import annotations

import weakref


class Node:
    """Base of the three node kinds; `next` has one entry (or None) per input."""

    __slots__ = ("next", "hooks", "retained", "__weakref__")

    def __init__(self, next_nodes: tuple[Node | None, ...] = ()):
        self.next = next_nodes
        self.hooks: dict[int, object] | None = None  # made by the first register_hook
        self.retained = None  # weakref to a non-leaf Tensor that called retain_grad()

    def apply(self, grad):
        """Gradients for each input, given the gradient of this node's output."""
        raise NotImplementedError

    def release(self) -> None:
        """Free what was saved for backward."""

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name}>"


class OpNode(Node):
    """The history of one primitive: its table row, its static argument, and the values
    saved for its rule: its inputs' (`saved`) and its output's (`out`), both None once
    released."""

    __slots__ = ("op", "arg", "saved", "out")

    def __init__(self, op, arg, nodes, bufs, out_buf):
        # Node.__init__ written out: one of these is made per recorded operation.
        # `nodes` and `bufs` are the inputs' histories and values.
        self.next = nodes
        self.hooks = self.retained = None
        self.op, self.arg = op, arg
        self.saved, self.out = bufs, out_buf

    @property
    def name(self) -> str:
        return f"{self.op.name.capitalize()}Backward"

    def apply(self, grad):
        if self.saved is None:
            raise _freed(self.op.name)
        make = type(grad)._wrap
        tensors = [make(buf, node) for buf, node in zip(self.saved, self.next)]
        return self.op.vjp(grad, make(self.out, self), *tensors, self.arg)

    def release(self) -> None:
        self.saved = self.out = None


class AccumulateGrad(Node):
    """The node of a leaf that requires grad; it holds the leaf weakly."""

    __slots__ = ("leaf",)

    def __init__(self, leaf):
        super().__init__()
        self.leaf = weakref.ref(leaf)

    def apply(self, grad):
        return ()


class FunctionNode(Node):
    """The history of a custom `ng.Function` call."""

    __slots__ = ("fn", "ctx")

    def __init__(self, fn, ctx, next_nodes):
        super().__init__(next_nodes)
        self.fn, self.ctx = fn, ctx

    @property
    def name(self) -> str:
        return f"{self.fn.__name__}Backward"

    def apply(self, grad):
        if self.ctx.saved is None:
            raise _freed(self.fn.__name__)
        grads = self.fn.backward(self.ctx, grad)
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) != len(self.next):
            raise RuntimeError(
                f"{self.fn.__name__}.backward returned {len(grads)} gradients; expected "
                f"{len(self.next)}, one per forward input")
        return grads

    def release(self) -> None:
        self.ctx.saved = None


def _freed(op_name: str) -> RuntimeError:
    return RuntimeError(
        f"Trying to backward through the graph a second time: the values saved by "
        f"'{op_name}' were freed after the first backward pass. Pass retain_graph=True "
        f"to the first backward() or grad() call to backward through it again.")
