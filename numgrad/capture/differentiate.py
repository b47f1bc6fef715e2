"""History for a jitted call's results: the VJP of a replay is another jitted function.

A result that the trace found depending on tensors that require grad gets a
`JitNode`. Its VJP calls a jitted function that runs the original one on the
call's argument values and returns ``ng.grad`` of that result: traced once, replayed
after, and itself differentiable the same way, so higher orders work too.
"""

from __future__ import annotations

from numgrad.autograd import enable_grad, grad, is_grad_enabled
from numgrad.autograd.graph import Node
from numgrad.capture import tree
from numgrad.tensor import Tensor


class JitNode(Node):
    """The history of result `index` of a jitted call: edges to the arguments and
    captured tensors that require grad; saves the arguments' values."""

    __slots__ = ("vjp", "saved")

    def __init__(self, vjp, leaves: list, wrt: list):
        super().__init__(tuple([t._node for t in wrt]))
        self.vjp = vjp
        self.saved = [(t._buf, t._node) for t in leaves]

    @property
    def name(self) -> str:
        return f"{self.vjp.__name__}Backward"

    def apply(self, cotangent):
        if self.saved is None:
            raise RuntimeError(
                f"Trying to backward through the graph a second time: the values saved by "
                f"'{self.vjp.__name__}' were freed after the first backward pass. Pass "
                f"retain_graph=True to the first backward() or grad() call.")
        leaves = [Tensor._wrap(buf, node) for buf, node in self.saved]
        return self.vjp(leaves, cotangent)

    def release(self) -> None:
        self.saved = None


def vjp_function(fn, jit, spec, index: int, diff: list[bool], captured: list):
    """A jitted ``vjp(leaves, cotangent)``: the gradients of result `index` of
    ``fn(*args)`` (args rebuilt from `spec` around `leaves`) with respect to the leaves
    that `diff` marks and the `captured` tensors, cotangent `cotangent`."""

    def vjp(leaves, cotangent):
        create_graph = is_grad_enabled()
        with enable_grad():
            args, kwargs = tree.unflatten(spec, iter(leaves))
            _, results = tree.flatten_results(fn(*args, **kwargs), fn.__name__)
            wrt = [t for t, d in zip(leaves, diff) if d] + captured
            return grad(results[index], wrt, cotangent, create_graph=create_graph,
                        allow_unused=True)

    vjp.__name__ = f"{fn.__name__}_vjp{index}"
    return jit(vjp)
