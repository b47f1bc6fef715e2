"""``check_grads``, ``combo_check`` and ``grad`` for HIPS autograd's vendored tests, on
numgrad.

``check_grads(f, argnum=0, modes=["fwd", "rev"], order=2)(*args)`` has autograd's
signature. numgrad is reverse mode only, so both modes run `numgrad.gradcheck` (central
differences, its defaults: eps 1e-6, atol 1e-5, rtol 1e-3) with respect to the
arguments `argnum` names (a list or tuple argument, as ``np.concatenate``'s, contributes
each element), and ``order=2`` adds `numgrad.gradgradcheck` over the outputs that depend on them.
`combo_check` is autograd's own (autograd/test_util.py), which carries this notice:

    Copyright (c) 2025 by the President and Fellows of Harvard University
    (MIT License; see https://github.com/HIPS/autograd/blob/master/license.txt)
"""

from itertools import product

import numpy

import numgrad


def check_grads(f, argnum=0, modes=("fwd", "rev"), order=2):
    assert all(m in ["fwd", "rev"] for m in modes)
    argnums = tuple(argnum) if isinstance(argnum, (tuple, list)) else (argnum,)

    def check(*args, **kwargs):
        leaves, places = [], []
        for i in argnums:
            group = args[i] if isinstance(args[i], (list, tuple)) else [args[i]]
            places.append((i, len(group), isinstance(args[i], (list, tuple)), type(args[i])))
            leaves += [numgrad.tensor(numpy.asarray(a, dtype=numpy.float64), requires_grad=True)
                       for a in group]

        def fn(*xs):
            full, k = list(args), 0
            for i, n, is_group, kind in places:
                full[i] = kind(xs[k:k + n]) if is_group else xs[k]
                k += n
            outs = f(*full, **kwargs)
            outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
            return tuple(o if isinstance(o, numgrad.Tensor) else numgrad.tensor(o) for o in outs)

        numgrad.gradcheck(fn, leaves)
        connected = [k for k, o in enumerate(fn(*leaves)) if o.requires_grad]
        if order > 1 and connected:
            numgrad.gradgradcheck(lambda *xs: tuple(fn(*xs)[k] for k in connected), leaves)

    return check


def legacy_check_grads(fun, *args):
    """The first autograd's ``check_grads(fun, *args)``: first order, every argument."""
    check_grads(fun, tuple(range(len(args))), order=1)(*args)


def grad(fun, argnum=0):
    """autograd's ``grad``: the gradient of scalar-valued `fun` with respect to one
    argument, itself differentiable (``create_graph=True``)."""
    def gradfun(*args):
        args = list(args)
        x = args[argnum]
        if not isinstance(x, numgrad.Tensor) or not x.requires_grad:
            x = args[argnum] = numgrad.tensor(numpy.asarray(x, dtype=numpy.float64),
                                              requires_grad=True)
        (g,) = numgrad.grad(fun(*args), x, create_graph=True, materialize_grads=True)
        return g

    return gradfun


def combo_check(fun, *args, **kwargs):
    # Tests all combinations of args and kwargs given.
    _check_grads = lambda f: check_grads(f, *args, **kwargs)  # noqa: E731 - autograd's

    def _combo_check(*args, **kwargs):
        kwarg_key_vals = [[(k, x) for x in xs] for k, xs in kwargs.items()]
        for _args in product(*args):
            for _kwargs in product(*kwarg_key_vals):
                _check_grads(fun)(*_args, **dict(_kwargs))

    return _combo_check


def eager_combo_check(fun, argnums, *args, **kwargs):
    """The ``combo_check(fun, argnums, *args, **kwargs)`` of autograd's numpy_utils in
    the era of the vendored test_systematic.py: checks every combination at once."""
    combo_check(fun, argnums)(*args, **kwargs)
