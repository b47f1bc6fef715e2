"""Pictures of a tensor's graphs: the autograd graph and the fused kernel schedule.

`dot` writes Graphviz's DOT language and needs nothing; `graph` renders it to SVG
with the ``graphviz`` Python package and Graphviz's ``dot`` program, which are
optional (``pip install "numgrad[viz]"`` and, for the program, your system's
package manager, e.g. ``apt install graphviz`` or ``brew install graphviz``).

Examples
--------
>>> import numgrad as ng
>>> import numgrad.viz
>>> x = ng.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x * x).sum()
>>> print(ng.viz.dot(y, kind="autograd"))  # doctest: +ELLIPSIS
digraph autograd {
...
}
"""

from __future__ import annotations

from numgrad.autograd.graph import AccumulateGrad, Node, OpNode
from numgrad.engine.schedule import schedule
from numgrad.engine.steps import Launch

__all__ = ["dot", "graph"]

KINDS = ("autograd", "schedule")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _autograd(tensor) -> list[str]:
    """DOT lines for the backward graph reachable from `tensor.grad_fn`."""
    root = tensor.grad_fn
    lines = [f'  output [label={_quote("output " + _shape(tensor.shape))}, shape=ellipse, '
             f'style=filled, fillcolor="#dddddd"];']
    if root is None:
        what = "a leaf that requires grad" if tensor.requires_grad else "no history"
        lines[0] = (f'  output [label={_quote(f"output {_shape(tensor.shape)}: {what}")}, '
                    f'shape=ellipse];')
        return lines
    ids: dict[int, str] = {}
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if id(node) in ids:
            continue
        name = ids[id(node)] = f"n{len(ids)}"
        label, color = node.name, "#cfe2ff"
        if isinstance(node, AccumulateGrad):
            leaf = node.leaf()
            shape = _shape(leaf.shape) if leaf is not None else "freed"
            label, color = f"AccumulateGrad\nleaf {shape}", "#d1e7dd"
        elif isinstance(node, OpNode) and node.saved is not None:
            label += f"\n-> {_shape(node.out.shape)}"
        elif isinstance(node, OpNode):
            label += "\n(saved values freed)"
        if node.retained is not None:
            label += "\nretains grad"
        lines.append(f'  {name} [label={_quote(label)}, style=filled, fillcolor="{color}"];')
        stack.extend(n for n in node.next if n is not None)
    lines.append(f"  output -> {ids[id(root)]};")
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for n in node.next:
            if n is not None:
                lines.append(f"  {ids[id(node)]} -> {ids[id(n)]};")
                stack.append(n)
    return lines


def _schedule(tensor) -> list[str]:
    """DOT lines for the kernels realizing `tensor` would run (nothing runs)."""
    lines: list[str] = []
    if tensor._buf.is_realized:
        lines.append('  done [label="already computed: nothing to run", shape=note];')
        return lines
    plan, slots = schedule([tensor._buf])
    producer: dict[int, str] = {}  # slot -> the node computing it
    inputs: dict[int, str] = {}
    for n, step in enumerate(plan.steps):
        name = f"k{n}"
        if isinstance(step, Launch):
            program = step.program
            ops = [ins[0] for ins in program.code + program.epilogue
                   if ins[0] not in ("in", "arg", "acc")]
            fused = f"{len(ops)} fused op{'s' * (len(ops) != 1)}"
            title = f"kernel {n}: {program.reduce} of {fused}" if program.reduce \
                else f"kernel {n}: {fused}"
            body = ", ".join(ops[:8]) + (", ..." if len(ops) > 8 else "")
            outputs = list(step.outputs)
            results = ", ".join(f"{_shape(plan.slots[o].shape)} {plan.slots[o].dtype}"
                                for o in outputs[:3])
            results += f" and {len(outputs) - 3} more" if len(outputs) > 3 else ""
            label = f"{title}\n{body}\n-> {results}"
            sources = [r.slot for r in step.inputs] + list(step.tables)
            color = "#fff3cd"
        else:
            out = plan.slots[step.output]
            label = f"{n}: {step.op} (backend)\n-> {_shape(out.shape)} {out.dtype}"
            sources, outputs = list(step.inputs), [step.output]
            color = "#e2e3e5"
        lines.append(f'  {name} [label={_quote(label)}, shape=box, style=filled, '
                     f'fillcolor="{color}"];')
        for src in sources:
            if src in producer:
                lines.append(f"  {producer[src]} -> {name};")
                continue
            if src not in inputs:
                inputs[src] = f"b{len(inputs)}"
                what = "buffer" if slots[src].is_realized else "index"
                buf = plan.slots[src]
                lines.append(f'  {inputs[src]} [label='
                             f'{_quote(f"{what} {_shape(buf.shape)} {buf.dtype}")}, '
                             f'shape=ellipse];')
            lines.append(f"  {inputs[src]} -> {name};")
        for o in outputs:
            producer[o] = name
    target = slots.index(tensor._buf) if tensor._buf in slots else None
    if target is not None and target in producer:
        lines.append('  output [label="output", shape=ellipse, style=filled, '
                     'fillcolor="#dddddd"];')
        lines.append(f"  {producer[target]} -> output;")
    return lines


def dot(tensor, kind: str = "autograd") -> str:
    """The DOT source of `tensor`'s autograd graph or of its kernel schedule.

    Parameters
    ----------
    tensor : Tensor
        The output whose graph is drawn.
    kind : {'autograd', 'schedule'}
        ``'autograd'``: the backward graph from ``tensor.grad_fn`` to the leaves'
        ``AccumulateGrad`` nodes. ``'schedule'``: the kernels realizing `tensor`
        would run (as `numgrad.explain` lists them), with the buffers they read;
        nothing is run.

    Returns
    -------
    str
        A ``digraph`` in Graphviz's DOT language.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be 'autograd' or 'schedule', got {kind!r}")
    from numgrad.tensor import Tensor

    if not isinstance(tensor, Tensor):
        raise TypeError(f"expected a Tensor, got {type(tensor).__name__}")
    body = _autograd(tensor) if kind == "autograd" else _schedule(tensor)
    direction = "BT" if kind == "autograd" else "TB"
    return "\n".join([f"digraph {kind} {{", f"  rankdir={direction};",
                      '  node [fontname="Helvetica", fontsize=11];', *body, "}"])


def graph(tensor, kind: str = "autograd") -> str:
    """Render `tensor`'s autograd graph or kernel schedule as SVG text.

    Parameters
    ----------
    tensor : Tensor
    kind : {'autograd', 'schedule'}
        As for `dot`.

    Returns
    -------
    str
        An SVG document (show it in Jupyter with ``IPython.display.SVG``, or write
        it to a ``.svg`` file).

    Raises
    ------
    ImportError
        The ``graphviz`` Python package is not installed.
    RuntimeError
        Graphviz's ``dot`` program is not installed (or failed).
    """
    source = dot(tensor, kind)
    try:
        import graphviz
    except ImportError:
        raise ImportError(
            "numgrad.viz.graph needs the 'graphviz' Python package and Graphviz's 'dot' "
            "program: pip install \"numgrad[viz]\" (or pip install graphviz), and install "
            "the program with your package manager (apt install graphviz, brew install "
            "graphviz, conda install graphviz). numgrad.viz.dot(t) gives the DOT source "
            "without them.") from None
    try:
        svg = graphviz.Source(source).pipe(format="svg")
    except graphviz.ExecutableNotFound:
        raise RuntimeError(
            "numgrad.viz.graph needs Graphviz's 'dot' program on PATH, which is not a Python "
            "package: install it with apt install graphviz, brew install graphviz or conda "
            "install graphviz. numgrad.viz.dot(t) gives the DOT source without it.") from None
    except graphviz.CalledProcessError as error:
        raise RuntimeError(f"Graphviz's dot program failed: {error}") from None
    return svg.decode() if isinstance(svg, bytes) else svg
