"""The backward pass. `backward` (stores into ``.grad``) and `grad` (returns) share it."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from numgrad import tracing
from numgrad.autograd.grad_mode import set_grad_enabled
from numgrad.autograd.graph import AccumulateGrad, Node

#: Held while a gradient is added into a ``.grad``: threads running backward into
#: shared leaves (one model's parameters) add up, none overwriting another's sum.
_grad_lock = threading.Lock()


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _seed(out, grad, i: int, batched: bool):
    """The gradient of output `out` to start from, validated at the boundary."""
    if grad is None:
        if out.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for outputs with one element; output "
                f"{i} has shape {out.shape}: pass a gradient of that shape")
        return out.ones_like()
    if not hasattr(grad, "_buf"):
        grad = out.new_tensor(grad)
    if batched and grad.shape[1:] != out.shape:
        raise ValueError(
            f"batched gradient {i} has shape {grad.shape}; expected a leading batch "
            f"dimension followed by output {i}'s shape {out.shape}")
    if not batched and grad.shape != out.shape:
        raise ValueError(
            f"gradient {i} has shape {grad.shape}, but output {i} has shape {out.shape}; "
            f"they must match exactly")
    if grad.device != out.device:
        raise RuntimeError(
            f"gradient {i} is on device '{grad.device}', but output {i} is on "
            f"'{out.device}'")
    if grad.dtype.kind != "f":
        raise TypeError(f"gradient {i} has dtype {grad.dtype}; expected a floating dtype")
    return grad.astype(out.dtype) if grad.dtype != out.dtype else grad


def _needed(roots: list[Node], targets: set[int] | None) -> dict[int, Node]:
    """Nodes on a path from `roots` to a target (to any leaf when `targets` is None)."""
    needed: dict[int, Node] = {}
    state: dict[int, bool] = {}
    stack: list[tuple[Node, bool]] = [(r, False) for r in roots]
    while stack:
        node, done = stack.pop()
        if done:
            hit = (targets is None or id(node) in targets) or any(
                n is not None and id(n) in needed for n in node.next)
            if hit:
                needed[id(node)] = node
            continue
        if id(node) in state:
            continue
        state[id(node)] = True
        stack.append((node, True))
        stack.extend((n, False) for n in node.next if n is not None and id(n) not in state)
    return needed


def run_backward(outputs, grad_outputs, inputs, *, accumulate: bool, retain_graph,
                 create_graph: bool, allow_unused: bool = False,
                 materialize_grads: bool = False, is_grads_batched: bool = False,
                 touched: list | None = None):
    """Backpropagate from `outputs`; accumulate into ``.grad`` or return input gradients.

    With ``accumulate=True`` (``backward``) every leaf reached gets its gradient added
    to ``.grad`` (only `inputs`, when given); otherwise (``grad``) the gradients of
    `inputs` are returned as a tuple and no ``.grad`` changes. Tensors whose
    ``.grad`` changed are appended to `touched`. With `is_grads_batched`, each
    seed has a leading batch dimension and each row is backpropagated at once.
    """
    outputs = _as_tuple(outputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"got {len(grad_outputs)} gradients for {len(outputs)} outputs")
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of the outputs does not require grad and has no grad_fn: "
                f"nothing to differentiate")
    if is_grads_batched and any(g is None for g in grad_outputs):
        raise ValueError("is_grads_batched=True needs grad_outputs for every output")
    seeds = [_seed(out, g, i, is_grads_batched)
             for i, (out, g) in enumerate(zip(outputs, grad_outputs))]
    if retain_graph is None:
        retain_graph = create_graph

    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"input {i} does not require grad: it has no gradient")
    targets = {id(t._node): t for t in inputs}
    needed = _needed([o._node for o in outputs], set(targets) if inputs else None)

    # Count, for each needed node, the needed nodes that will send it a gradient.
    waiting: dict[int, int] = dict.fromkeys(needed, 0)
    for node in needed.values():
        for n in node.next:
            if n is not None and id(n) in needed:
                waiting[id(n)] += 1

    grads: dict[int, object] = {}
    for out, seed in zip(outputs, seeds):
        key = id(out._node)
        grads[key] = seed if key not in grads else grads[key] + seed
    ready = [o._node for o in {id(o._node): o for o in outputs}.values()
             if id(o._node) in needed and waiting[id(o._node)] == 0]
    found: dict[int, object] = {}
    ran: list[Node] = []
    with set_grad_enabled(create_graph):
        while ready:
            node = ready.pop()
            grad = grads.pop(id(node), None)
            if grad is not None:
                grad = _call_hooks(node, grad)
                _deliver(node, grad, targets, found, accumulate, inputs, touched)
            if isinstance(node, AccumulateGrad):
                continue
            downstream = [n is not None and id(n) in needed for n in node.next]
            if grad is not None and any(downstream):
                ran.append(node)
                for n, g, wanted in zip(node.next, node.apply(grad), downstream):
                    if wanted and g is not None:
                        grads[id(n)] = g if id(n) not in grads else grads[id(n)] + g
            for n, wanted in zip(node.next, downstream):
                if wanted:
                    waiting[id(n)] -= 1
                    if waiting[id(n)] == 0:
                        ready.append(n)
    if not retain_graph:
        for node in needed.values():
            node.release()

    if accumulate:
        return None
    result = []
    for i, t in enumerate(inputs):
        g = found.get(id(t._node))
        if g is None:
            if materialize_grads:
                lead = seeds[0].shape[:1] if is_grads_batched else ()
                g = t.zeros_like().broadcast_to(lead + t.shape)
            elif not allow_unused:
                raise RuntimeError(
                    f"input {i} was not used to compute the outputs; pass allow_unused=True "
                    f"to get None for it, or materialize_grads=True to get zeros")
        result.append(g)
    return tuple(result)


def _call_hooks(node: Node, grad):
    for hook in list(node.hooks.values()) if node.hooks else ():
        replaced = hook(grad)
        if replaced is not None:
            grad = replaced
    return grad


def _deliver(node: Node, grad, targets, found, accumulate: bool, inputs: Sequence,
             touched: list | None) -> None:
    """Store `grad` where it belongs: a leaf's or retained tensor's .grad, or `found`."""
    if not accumulate:
        if id(node) in targets:
            found[id(node)] = grad
        return
    if isinstance(node, AccumulateGrad):
        tensor = node.leaf() if (not inputs or id(node) in targets) else None
    elif id(node) in targets:
        tensor = targets[id(node)]
    else:
        tensor = node.retained() if node.retained is not None else None
    if tensor is not None:
        if tracing.ACTIVE:
            tracing.touch(tensor)
        with _grad_lock:
            tensor._grad = grad if tensor._grad is None else tensor._grad + grad
        if touched is not None:
            touched.append(tensor)
