"""Compare numgrad's PyTorch-named Tensor methods with PyTorch itself: the calls of
tests/numpy/test_tensor_habits.py (values, and the gradients of the composites) made on
``torch.tensor`` and ``ng.tensor`` of the same float64 data.

PyTorch is never a numgrad dependency; run this in an environment of its own with numgrad
installed beside torch:

    python -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch pytest -e .
    /tmp/torchenv/bin/python tools/torch_names_check.py

Prints each call whose values or gradients differ (rtol 1e-10) and a count.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

import numgrad as ng

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "numpy"))
import test_tensor_habits as habits  # noqa: E402

GRADIENT_CALLS = next(mark.args[1] for mark in
                      habits.test_torch_named_composites_have_gradients.pytestmark
                      if mark.name == "parametrize")


def names(tensor, requires_grad: bool = False) -> dict:
    values = dict(t=habits.A, b=habits.B, s=habits.S, i=habits.INDEX, m=habits.MASK)
    made = {k: tensor(v) for k, v in values.items()}
    made["t"] = tensor(habits.A, requires_grad=requires_grad)
    return made


def value(result):
    if isinstance(result, (tuple, list)):
        return [value(r) for r in result]
    if isinstance(result, (torch.Tensor, ng.Tensor)):
        return result.detach().numpy()
    return result


def same(a, b) -> bool:
    if isinstance(a, str):
        return False
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.allclose(a, b, 1e-10, 1e-12, equal_nan=True)


def call(library, text: str, requires_grad: bool = False):
    env = names(library, requires_grad)
    target = "t[:, :3]" if text.startswith("addmm") else "t"
    return env, eval(f"{target}.{text}", {}, env)


def gradient(library, text: str):
    env, out = call(library, text, requires_grad=True)
    seed = np.random.default_rng(3).standard_normal(tuple(out.shape))
    (out * library(seed)).sum().backward()
    return env["t"].grad.numpy()


def main() -> int:
    bad = 0
    for text in habits.TORCH_CALLS:
        try:
            got = [value(call(lib, text)[1]) for lib in (torch.tensor, ng.tensor)]
        except RuntimeError as error:
            got = [f"raised {str(error)[:80]}", ""]
        if not same(*got):
            bad += 1
            print(f"value  t.{text}\n  torch   {got[0]}\n  numgrad {got[1]}")
    for text in GRADIENT_CALLS:
        try:
            expected = gradient(torch.tensor, text)
        except RuntimeError as error:  # torch refuses some calls numgrad allows
            print(f"(torch refuses t.{text}: {str(error)[:80]})")
            continue
        if not same(expected, gradient(ng.tensor, text)):
            bad += 1
            print(f"gradient  t.{text}")
    total = len(habits.TORCH_CALLS) + len(GRADIENT_CALLS)
    print(f"{bad} of {total} calls differ from PyTorch {torch.__version__}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
