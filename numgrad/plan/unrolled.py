"""A prepared plan's replay written out as one Python function, made once per plan.

`numgrad.plan.prepared` prepares a plan's steps (its calls, and its launches with
their argument lists, the views they read, the arrays they recycle); replaying them
one by one costs a loop over the steps, their holes and outputs, and tuple unpacking
and branches, at every step, which is a large part of a small eager step's replay.
`unrolled` writes those steps out, in order, as the statements each needs, with
slots read by number (``a[3]``) and what the steps hold (functions, argument lists,
shapes, views) bound by name. What a step does stays `PreparedPlan`'s to say (its
`_stepwise` runs the same steps one by one, until the plan has been replayed often
enough to earn back the compile: `numgrad.plan.prepared.UNROLL_AT`); this module
only writes them out.
"""

from __future__ import annotations

from collections.abc import Callable


def unrolled(steps: list[tuple], template: tuple, slots: tuple, scalars: dict,
             readers: dict, called_bytes: int, helpers: dict) -> Callable:
    """``replay(a, values, threads, kept, bases)``, which runs `steps`
    (`PreparedPlan.steps`: calls ``(index, how, fn)``; launches ``(kernel, outputs,
    arguments, holes, threads at, index)``) of the plan whose steps are `template`
    and buffers `slots`, over `a` (the array of every slot, filled in), with the
    plan's `values` (`Schedule.values`, or None: then the template's own `scalars`,
    per launch that has them), the thread count, the arrays the
    last run handed out (`kept`) and the bases of the cached views (`bases`); it
    returns the bytes it allocated, `called_bytes` included. `readers` are the
    prepared plan's, per slot recycled; `helpers` binds ``unused``, ``view``,
    ``backend`` and ``empty``."""
    names = dict(helpers)

    def bound(value) -> str:
        """A name for `value` in the function's namespace."""
        name = f"_{len(names)}"
        names[name] = value
        return name

    lines = ["def replay(a, values, threads, kept, bases):",
             f"    allocated = {called_bytes}"]
    for step in steps:
        if len(step) == 3:
            lines += _call(step, template, slots, readers, bound)
        else:
            lines += _launch(step, scalars.get(step[5]), bound)
    lines.append("    return allocated")
    exec(compile("\n".join(lines), "<numgrad prepared replay>", "exec"), names)
    return names["replay"]


def _call(step: tuple, template: tuple, slots: tuple, readers: dict, bound) -> list[str]:
    """The statements of a call: its argument (the rebound plan's values, if any),
    then as `how` says (`PreparedPlan`)."""
    index, how, fn = step
    call = template[index]
    fn, out = bound(fn), call.output
    ins = "".join(f"a[{s}], " for s in call.inputs)
    lines = [f"    arg = {bound(call.arg)} if values is None or values[{index}] is None "
             f"else {bound(call)}.bound_arg(values[{index}])"]
    if how == "recycled":  # into the array it gave last time, if nothing else holds it
        return lines + [
            f"    array = kept[{out}]",
            f"    if array is not None and unused(array, {bound(readers[out])}, bases):",
            f"        {fn}({ins}arg, out=array)",
            "    else:",
            f"        array = kept[{out}] = {fn}({ins}arg)",
            "        allocated += array.nbytes",
            f"    a[{out}] = array"]
    if how == "full":
        info = slots[out]
        return lines + [f"    a[{out}] = {fn}({bound(info.shape)}, arg, {bound(info.dtype)})"]
    if how == "into":
        return lines + [f"    {fn}({ins}arg, out=a[{out}])"]
    return lines + [f"    a[{out}] = {fn}({ins}arg)"]  # a call, or a view


def _launch(step: tuple, own: tuple | None, bound) -> list[str]:
    """The statements of a launch: its outputs (recycled small ones, new others), its
    argument list's holes filled (a cached view made again only for a new base), the
    kernel called, and the holes that are not cached emptied."""
    kernel, outputs, arguments, holes, threads_at, index = step
    lines = []
    for slot, info, readers in outputs:
        shape, dtype = bound(info.shape), bound(info.dtype)
        if readers is None:  # (large: never kept)
            lines += [f"    array = a[{slot}] = empty({shape}, {dtype})",
                      "    allocated += array.nbytes"]
            continue
        lines += [f"    array = kept[{slot}]",
                  f"    if array is None or not unused(array, {bound(readers)}, bases):",
                  f"        array = kept[{slot}] = empty({shape}, {dtype})",
                  "        allocated += array.nbytes",
                  f"    a[{slot}] = array"]
    if kernel is None:
        return lines
    args = bound(arguments)
    lines.append(f"    {args}[{threads_at}] = threads")
    if own:  # scalars: the rebound plan's, else the template's own (always written:
        # another rebinding of the plan may have left its own in the argument list)
        lines += [f"    {args}[-{len(own)}:] = {bound(own)} if values is None or "
                  f"values[{index}] is None else values[{index}]"]
    for position, slot, spec, cached in holes:
        made = "base" if spec[3] == "same" else f"view(backend, base, {bound(spec)})"
        if cached is None:
            lines += [f"    base = a[{slot}]", f"    {args}[{position}] = {made}"]
        else:
            lines += [f"    base = a[{slot}]",
                      f"    if bases[{cached}] is not base:",
                      f"        {args}[{position}] = {made}",
                      f"        bases[{cached}] = base"]
    lines.append(f"    {bound(kernel)}(*{args})")
    lines += [f"    {args}[{position}] = None" for position, _, _, cached in holes
              if cached is None]
    return lines
