"""Every script in examples/ runs (at small sizes), and so does README's example."""

import re
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run_example(name, monkeypatch, capsys, *args):
    """Run examples/`name` as ``__main__`` in this process, in its quick mode."""
    monkeypatch.setenv("NUMGRAD_EXAMPLES_QUICK", "1")
    monkeypatch.setattr(sys, "argv", [name, *args])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_every_example_has_a_test():
    tested = {"mlp_digits.py", "newton_rosenbrock.py", "thomson_problem.py",
              "dask_sweep.py", "dask_data_parallel.py"}  # the last two: test_dask.py
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested


def test_newton_rosenbrock_converges_quadratically(monkeypatch, capsys):
    out = run_example("newton_rosenbrock.py", monkeypatch, capsys)
    difference = float(re.search(r"max difference (\S+)$", out, re.M).group(1))
    assert difference <= 1e-9, out  # double backward's Hessian is the written-out one
    rows = re.findall(r"^ +(\d+) +(\S+) +(\S+) +(\S+)", out, re.M)
    steps = [(int(k), float(f), float(g)) for k, f, g, _ in rows]
    assert [k for k, _, _ in steps] == list(range(len(steps)))
    assert rows[-1][3] == "converged" and steps[-1][2] < 1e-10 and steps[-1][1] < 1e-20
    assert all(later <= earlier for (_, later, _), (_, earlier, _) in zip(steps[1:], steps))
    # quadratic convergence: near the minimum |grad| falls like its square
    gnorms = [g for _, _, g in steps[-3:]]
    assert gnorms[1] <= 100 * gnorms[0] ** 2 and gnorms[2] <= 100 * gnorms[1] ** 2, out
    iterations, distance = re.search(r"minimum after (\d+) Newton steps: max \|x - 1\| = (\S+)$",
                                     out, re.M).groups()
    assert int(iterations) == steps[-1][0] and float(distance) <= 1e-8, out


def test_newton_hessian_matches_the_analytic_one():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import newton_rosenbrock as example
    finally:
        sys.path.remove(str(EXAMPLES))
    import numpy as np

    x = np.array([0.3, -0.7, 1.1])
    f, g, h = example.value_gradient_hessian(x)
    np.testing.assert_allclose(h, example.analytic_hessian(x), rtol=1e-12)
    np.testing.assert_allclose(h, h.T)


def test_thomson_problem_finds_the_known_minima(monkeypatch, capsys):
    out = run_example("thomson_problem.py", monkeypatch, capsys)
    # (N, the lowest energy the run found, its difference column, starts that reached it)
    rows = re.findall(r"^ +(\d+) +(\S+) +\S+ +(\S+) +(\d+) of (\d+)", out, re.M)
    found = {int(n): (float(best), float(diff), int(at), int(starts))
             for n, best, diff, at, starts in rows}
    published = {5: 6.474691495, 6: 9.985281374}  # Wales and Ulker (2006)
    assert set(found) == set(published), out
    for n, (best, diff, at_best, starts) in found.items():
        assert best == pytest.approx(published[n], rel=1e-8), (n, out)
        # the difference column is best - known before rounding best to 9 decimals
        assert abs(diff) <= 1e-6 * published[n] and diff == pytest.approx(best - published[n],
                                                                          abs=1e-9)
        assert 1 <= at_best <= starts == 4


def test_mlp_digits_learns(monkeypatch, capsys):
    pytest.importorskip("sklearn")
    out = run_example("mlp_digits.py", monkeypatch, capsys, "--epochs", "3")
    train, val, test = map(int, re.search(
        r"^train (\d+), validation (\d+), test (\d+) images", out, re.M).groups())
    assert train + val + test == 1797 and test == 360
    epochs = re.findall(r"^epoch +(\d+) +loss (\S+) +validation accuracy (\S+)", out, re.M)
    assert [int(e) for e, _, _ in epochs] == [1, 2, 3]
    losses = [float(loss) for _, loss, _ in epochs]
    assert losses == sorted(losses, reverse=True) and losses[0] < np.log(10), out  # learning
    validation = [float(v) for _, _, v in epochs]
    accuracy, epoch, kept = re.search(
        r"^test accuracy (\S+) \(weights from epoch (\d+), validation (\S+)\)$", out,
        re.M).groups()
    # early stopping kept the first epoch with the best validation accuracy
    assert int(epoch) == 1 + validation.index(max(validation)) and float(kept) == max(validation)
    accuracy = float(accuracy)
    assert 0.6 < accuracy <= 1, out  # chance is 0.1
    assert round(accuracy * test) / test == pytest.approx(accuracy, abs=5e-5)  # k of 360


def test_readme_example_runs(capsys):
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    first, second = capsys.readouterr().out.splitlines()
    value, grad = first.split(" ", 1)
    # y = sum(tanh(x) exp(x)) and its gradient, at x = [0.5, 1, 2]
    x = np.array([0.5, 1.0, 2.0])
    assert float(value) == pytest.approx(np.sum(np.tanh(x) * np.exp(x)), rel=1e-12)
    printed = [float(v) for v in re.search(r"tensor\(\[(.*)\]", grad).group(1).split(",")]
    want = (1 - np.tanh(x) ** 2) * np.exp(x) + np.tanh(x) * np.exp(x)
    np.testing.assert_allclose(printed, want, rtol=1e-7)  # tensor prints 8 digits
    assert float(second) == 108.0  # d2/dt2 of t**4 at t = 3: 12 t**2
