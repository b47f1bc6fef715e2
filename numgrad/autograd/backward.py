"""The backward pass. `backward` (stores into ``.grad``) and `grad` (returns) share it."""

from __future__ import annotations

import functools
import itertools
import operator
import threading
from collections.abc import Sequence
from typing import NamedTuple

from numgrad import dtypes, engine
from numgrad.autograd.grad_mode import set_grad_enabled
from numgrad.autograd.graph import AccumulateGrad, Node, OpNode
from numgrad.autograd.pieces import pieces
from numgrad.lazy import MAX_DEPTH
from numgrad.ops import CONST, MOVEMENT
from numgrad.plan import recipes, tracing
from numgrad.plan.recorder import LOCAL
from numgrad.primitives import _apply, _as

#: Held while a gradient is added into a ``.grad``: threads running backward into
#: shared leaves (one model's parameters) add up, none overwriting another's sum.
grad_lock = threading.Lock()

#: A deep backward pass (a long loop's) is cut in repeating places, so that its
#: realizations share a few kernel structures rather than each compiling its own: where
#: its nodes repeat (`numgrad.autograd.pieces`), a piece of its loop at a time; else
#: when a value it reads, or a gradient it makes, is deeper than this, it computes
#: all of them (`_compute_saved`, `_propagate`), before `MAX_DEPTH` would cut one.
CUT_DEPTH = MAX_DEPTH // 2
#: Where they do not repeat, the saved values are computed a band of this many depths
#: at a time: a multiple of a loop's period in depth (as for periods 2, 3, 4, 6, 8, 12)
#: gives each band the same graph, so the same kernels.
BAND = 24
#: A node's gradient contributions are added when it is reached, and the sum fuses
#: into its readers. From this many on (a weight read at every step of a loop), they are
#: stacked and summed over the stacking axis instead, this many at a time and then
#: the rest: one reduction however many there are, where a chain of additions would
#: make kernels that depend on the loop's length (the last piece's terms).
STACK_AT = 32
_FREE = (CONST, MOVEMENT)  # saved values never stored for their depth
_depth = operator.attrgetter("depth")


def _band(buf) -> int:
    return buf.depth // BAND


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


def _needed(roots: list[Node], targets: dict | None) -> list[Node]:
    """Nodes on a path from `roots` to a target (to any leaf when `targets` is None),
    each after the nodes it sends a gradient to (depth first: the engine's order).

    (Nodes are keys by identity: Node defines no equality.)
    """
    order: list[Node] = []  # depth first, each node after the nodes it reaches
    seen: set[Node] = set()
    for root in reversed(roots):  # (the last root first)
        if root in seen:  # (a root another root reaches is placed below that one)
            continue
        seen.add(root)
        node, edges, above = root, iter(root.next), []
        while True:
            for n in edges:  # down the first edge not taken yet
                if n is not None and n not in seen:
                    seen.add(n)
                    above.append((node, edges))
                    node, edges = n, iter(n.next)
                    break
            else:  # every node it reaches is placed: back up
                order.append(node)
                if not above:
                    break
                node, edges = above.pop()
    if targets is None:  # every node reaches a leaf
        return order
    needed: dict[Node, None] = {}
    for node in order:
        if node in targets or any(n in needed for n in node.next):
            needed[node] = None
    return list(needed)


def _pending(needed: list[Node]) -> dict[Node, int]:
    """Each of the `needed` nodes with the number of needed nodes that will send it a
    gradient (what running the rules counts down; a recipe made again needs none)."""
    waiting = dict.fromkeys(needed, 0)
    for node in needed:
        for n in node.next:
            if n in waiting:
                waiting[n] += 1
    return waiting


def run_backward(outputs, grad_outputs, inputs, *, accumulate: bool, retain_graph,
                 create_graph: bool, allow_unused: bool = False,
                 materialize_grads: bool = False, is_grads_batched: bool = False,
                 touched: list | None = None, structural: list | None = None):
    """Backpropagate from `outputs`; accumulate into ``.grad`` or return input gradients.

    With ``accumulate=True`` (``backward``) every leaf reached gets its gradient added
    to ``.grad`` (only `inputs`, when given); otherwise (``grad``) the gradients of
    `inputs` are returned as a tuple and no ``.grad`` changes. Tensors whose
    ``.grad`` changed are appended to `touched`, and the needed nodes to `structural` if
    the pass's gradients follow from its structure (`_propagate_or_replay`). With
    `is_grads_batched`, each seed has a leading batch dimension and each row is
    backpropagated at once.
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
    targets = {t._node: t for t in inputs}
    order = _needed([o._node for o in outputs], targets if inputs else None)
    found: dict[Node, object] = {}

    def deliver(node: Node, grad) -> None:
        _deliver(node, grad, targets, found, accumulate, inputs, touched)

    with set_grad_enabled(create_graph):
        if create_graph or is_grads_batched or tracing.current() is not None:
            split = _compute_saved(order, _saved(order), 0)
            _propagate(outputs, seeds, _pending(order), deliver, split)
        else:
            if _propagate_or_replay(outputs, seeds, order, targets, deliver) and \
                    structural is not None:
                structural += order
    if not retain_graph:
        for node in order:
            node.release()

    if accumulate:
        return None
    result = []
    for i, t in enumerate(inputs):
        g = found.get(t._node)
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


def _saved(order: list[Node]) -> list:
    """The buffers that the nodes `order` saved for their rules."""
    saved = []
    for node in order:
        if type(node) is OpNode and node.saved is not None:
            saved += node.saved
            saved.append(node.out)
    return saved


class _Split(NamedTuple):
    """A deep pass's pieces (`numgrad.autograd.pieces`): each node's, and each saved
    value's (its node's)."""

    nodes: list[int]
    values: list[int]


def _split(order: list[Node], leading: int) -> _Split | None:
    """The pieces of a pass whose nodes `order` repeat, with its saved values as
    `_saved` lists them after `leading` others (of the first piece); else None."""
    number = pieces(order)
    if number is None:
        return None
    nodes = number.tolist()
    values = [0] * leading
    for node, k in zip(order, nodes):
        if type(node) is OpNode and node.saved is not None:
            values += [k] * (len(node.saved) + 1)
    return _Split(nodes, values)


def _compute_saved(order: list[Node], saved: list, leading: int) -> _Split | None:
    """Compute the pending buffers of `saved` (the saved values of the nodes `order`,
    after `leading` others, in the forward order), if one of them is deeper than
    `CUT_DEPTH` (views and constants excepted: free to read again): a realization per
    piece of the pass (`_split`, returned for `_propagate`), or where it has none, per
    run of them in one band of `BAND` depths. None for a shallow pass.

    A long loop's forward values are then stored as an eager library stores them,
    rather than recomputed, from wherever the loop was last cut for depth, in each
    realization of the backward pass that reads them: the pass's graphs then repeat
    from step to step, and so do its kernels. So do the pieces' graphs, whatever the
    loop's length: one realization of all the values would pack them into kernels
    at places that do not follow the loop's step.
    """
    if not saved or max(map(_depth, saved)) <= CUT_DEPTH:
        return None
    split = _split(order, leading)
    keys = map(_band, saved) if split is None else split.values
    pending = [(k, b) for k, b in zip(keys, saved)
               if b.realized is None and b.op.kind not in _FREE]
    for _, run in itertools.groupby(pending, key=operator.itemgetter(0)):
        engine.realize(*dict.fromkeys(b for _, b in run))
    return split


def _propagate(outputs, seeds, waiting: dict[Node, int], deliver, split: _Split | None,
               delivered: list | None = None) -> None:
    """Run the VJP rules from `outputs`, seeded by `seeds`, over the needed nodes
    (`waiting`: each with its count of pending senders, counted down here), handing
    each node's summed gradient to `deliver` (and, as (position, buffer) pairs, to
    `delivered`). Pending gradients are computed together (`recipes.cut`) where the
    pass reaches a piece before the ones it ran (`split`), and where one grows deeper
    than `CUT_DEPTH`."""
    position = {node: i for i, node in enumerate(waiting)} \
        if delivered is not None or split is not None else None
    piece = split.nodes if split is not None else None
    reached = None  # the earliest piece reached
    grads = _Contributions()
    for out, seed in zip(outputs, seeds):
        grads.add(out._node, seed)
    ready = [node for node in dict.fromkeys(o._node for o in outputs)
             if node in waiting and waiting[node] == 0]
    while ready:
        node = ready.pop()
        if piece is not None and (reached is None or piece[position[node]] < reached):
            if reached is not None:  # the pieces after it are done: the cuts repeat
                recipes.cut(grads.buffers())
            reached = piece[position[node]]
        grad = grads.pop(node)
        if grad is not None:
            if node.hooks:
                grad = _call_hooks(node, grad)
            deliver(node, grad)
            if delivered is not None:
                delivered.append((position[node], grad._buf))
        if isinstance(node, AccumulateGrad):
            continue
        downstream = [n in waiting for n in node.next]
        if grad is not None and any(downstream):
            deep = False
            for n, g, wanted in zip(node.next, node.apply(grad), downstream):
                if wanted and g is not None:
                    deep = grads.add(n, g) > CUT_DEPTH or deep
            if deep:  # every pending gradient computed at once: the cuts repeat
                recipes.cut(grads.buffers())
        for n, wanted in zip(node.next, downstream):
            if wanted:
                waiting[n] -= 1
                if waiting[n] == 0:
                    ready.append(n)


class _Contributions:
    """The gradient contributions each node has received, summed when it is reached:
    added (their sum fuses into its readers), or from `STACK_AT` of them on, stacked
    and summed over the new axis, `STACK_AT` at a time (`STACK_AT` module doc). One
    element each, they are added as they arrive (the scalar pass adds them in Python,
    `numgrad.plan.scalar_pass`, with no kernel)."""

    def __init__(self):
        self.terms: dict[Node, list] = {}
        self.stacked: set[Node] = set()

    def add(self, node: Node, grad) -> int:
        """Keep `grad` for `node`; returns the depth of their sum so far."""
        terms = self.terms.get(node)
        if terms is None:
            self.terms[node] = [grad]
            return grad._buf.depth
        if grad.size == 1:
            terms[0] = terms[0] + grad
            return terms[0]._buf.depth
        terms.append(grad)
        if len(terms) == STACK_AT and _same_shape(terms):
            self.stacked.add(node)
            terms[:] = [_stacked_sum(terms)]
        return max(t._buf.depth for t in terms) + len(terms) - 1

    def pop(self, node: Node):
        """The sum of `node`'s contributions (None if it received none)."""
        terms = self.terms.pop(node, None)
        if not terms:
            return None
        if len(terms) > 1 and node in self.stacked and _same_shape(terms):
            return _stacked_sum(terms)
        return functools.reduce(operator.add, terms)

    def buffers(self) -> list:
        return [t._buf for terms in self.terms.values() for t in terms]


def _same_shape(terms: list) -> bool:
    return all(t.shape == terms[0].shape for t in terms)


def _stacked_sum(terms: list):
    """``stack(terms).sum(0)``: a copy of each into one array, and one reduction."""
    dtype = dtypes.result_type(*(t.dtype for t in terms))
    rows = tuple(_as(t, dtype).expand_dims(0) for t in terms)
    return _apply("concatenate", rows, 0, (len(rows), *terms[0].shape), dtype).sum(0)


def _propagate_or_replay(outputs, seeds, order: list[Node], targets: dict, deliver) -> bool:
    """`_propagate`, or, for a pass of a structure seen before, its recipe made again
    from this graph's saved values (`numgrad.plan.recipes`), whose gradients go to
    the leaves and `targets` (the only nodes that keep one: a pass with retained
    gradients or hooks is not rebuilt). Returns whether the pass's gradients follow
    from its structure (what a step plan needs, `numgrad.plan.step_plans`): its nodes
    are primitives' with no hooks or retained gradients (`recipes.structure` keys it),
    and no rule read a value (`numgrad.plan.recorder.Recorder.read`)."""
    key, starts = recipes.structure(order, [o._node for o in outputs], [s._buf for s in seeds])
    recipe = recipes.recall(key) if key is not None else None
    split = None
    if not recipe or recipe.scalar is None:  # (a scalar pass saved computed values)
        saved, leading = (starts, len(seeds)) if starts is not None else (_saved(order), 0)
        split = _compute_saved(order, saved, leading)
    if recipe:
        wrap = type(seeds[0])._wrap
        for i, buf in recipes.gradients(recipe, starts, order, targets):
            deliver(order[i], wrap(buf))
    elif recipe is False:  # a new structure: run the rules, and record what they make
        recipes.record(lambda delivered: _propagate(outputs, seeds, _pending(order), deliver,
                                                   split, delivered), key, starts, order)
    else:
        _propagate(outputs, seeds, _pending(order), deliver, split)
    return key is not None and not LOCAL.recorder.read


def _call_hooks(node: Node, grad):
    for hook in list(node.hooks.values()):
        replaced = hook(grad)
        if replaced is not None:
            grad = replaced
    return grad


def _deliver(node: Node, grad, targets, found, accumulate: bool, inputs: Sequence,
             touched: list | None) -> None:
    """Store `grad` where it belongs: a leaf's or retained tensor's .grad, or `found`."""
    if not accumulate:
        if node in targets:
            found[node] = grad
        return
    if isinstance(node, AccumulateGrad):
        tensor = node.leaf() if (not inputs or node in targets) else None
    elif node in targets:
        tensor = targets[node]
    else:
        tensor = node.retained() if node.retained is not None else None
    if tensor is not None:
        tracing.saw(tensor)
        with grad_lock:
            tensor._grad = grad if tensor._grad is None else tensor._grad + grad
        if touched is not None:
            touched.append(tensor)
