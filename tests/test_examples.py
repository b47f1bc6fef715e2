"""Every script in examples/ runs (at small sizes), and so does README's example."""

import re
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_example(name, monkeypatch, capsys, *args):
    """Run examples/`name` as ``__main__`` in this process, in its quick mode."""
    monkeypatch.setenv("NUMGRAD_EXAMPLES_QUICK", "1")
    monkeypatch.setattr(sys, "argv", [name, *args])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_every_example_has_a_test():
    tested = {"mlp_digits.py", "newton_rosenbrock.py", "thomson_problem.py"}
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested


def test_newton_rosenbrock_converges_quadratically(monkeypatch, capsys):
    out = run_example("newton_rosenbrock.py", monkeypatch, capsys)
    assert "max difference 0.0e+00" in out or re.search(r"max difference \d\.\de-1\d", out)
    assert "converged" in out
    assert re.search(r"max \|x - 1\| = \d\.\de-(0[89]|1\d)", out), out


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
    assert "6.474691" in out and "9.985281" in out


def test_mlp_digits_learns(monkeypatch, capsys):
    pytest.importorskip("sklearn")
    out = run_example("mlp_digits.py", monkeypatch, capsys, "--epochs", "2")
    accuracy = float(re.search(r"test accuracy (\d\.\d+)", out).group(1))
    assert accuracy > 0.6, out


def test_readme_example_runs(capsys):
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "108.0" in out  # the second derivative the example prints
