"""numgrad.viz: DOT source of the autograd graph and of the schedule, and SVG rendering."""

import shutil
import sys
import types

import pytest

import numgrad as ng
import numgrad.viz as viz


def small_graph():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor([[1.0], [2.0]], requires_grad=True)
    return x, w, ((x.exp() * x) @ w).tanh().sum()


def test_autograd_graph_names_each_node_and_leaf():
    x, w, y = small_graph()
    source = viz.dot(y, kind="autograd")
    assert source.startswith("digraph autograd {") and source.endswith("}")
    for name in ("SumBackward", "TanhBackward", "MatmulBackward", "MultiplyBackward",
                 "ExpBackward"):
        assert name in source
    assert source.count("AccumulateGrad") == 2  # x and w, each once
    assert "leaf (2,)" in source and "leaf (2, 1)" in source
    # x feeds multiply and exp: two edges into its AccumulateGrad node.
    x_node = next(line.split()[0] for line in source.splitlines() if "leaf (2,)" in line)
    assert sum(line.strip().endswith(f"-> {x_node};") for line in source.splitlines()) == 2


def test_autograd_graph_after_backward_shows_freed_values():
    _, _, y = small_graph()
    y.backward()
    assert "saved values freed" in viz.dot(y)


def test_autograd_graph_of_a_tensor_without_history():
    assert "no history" in viz.dot(ng.tensor([1.0]))
    assert "a leaf that requires grad" in viz.dot(ng.tensor([1.0], requires_grad=True))


def test_schedule_graph_lists_kernels_and_backend_ops():
    _, _, y = small_graph()
    source = viz.dot(y, kind="schedule")
    assert source.startswith("digraph schedule {")
    assert "kernel 0: 2 fused ops" in source and "exp, multiply" in source
    assert "matmul (backend)" in source
    assert "-> output;" in source
    assert source.count("buffer (2,) float64") == 1  # x is drawn once
    y.numpy()
    assert "nothing to run" in viz.dot(y, kind="schedule")


def test_bad_arguments():
    _, _, y = small_graph()
    with pytest.raises(ValueError, match="'autograd' or 'schedule'"):
        viz.dot(y, kind="kernels")
    with pytest.raises(TypeError, match="expected a Tensor"):
        viz.dot([1.0])


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is missing")
def test_graph_renders_svg_with_graphviz():
    pytest.importorskip("graphviz")
    _, _, y = small_graph()
    for kind in ("autograd", "schedule"):
        svg = viz.graph(y, kind=kind)
        assert "<svg" in svg and "</svg>" in svg
        assert ("MatmulBackward" if kind == "autograd" else "fused ops") in svg


def test_graph_without_the_python_package_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz raises
    _, _, y = small_graph()
    with pytest.raises(ImportError, match=r"pip install \"numgrad\[viz\]\".*apt install graphviz"):
        viz.graph(y)


def fake_graphviz(pipe):
    module = types.ModuleType("graphviz")

    class ExecutableNotFound(RuntimeError):
        pass

    class CalledProcessError(RuntimeError):
        pass

    class Source:
        def __init__(self, source):
            self.source = source

        def pipe(self, format):
            return pipe(module, self.source, format)

    module.ExecutableNotFound = ExecutableNotFound
    module.CalledProcessError = CalledProcessError
    module.Source = Source
    return module


def test_graph_without_the_dot_program_names_the_install(monkeypatch):
    def missing(module, source, format):
        raise module.ExecutableNotFound("failed to execute 'dot'")

    monkeypatch.setitem(sys.modules, "graphviz", fake_graphviz(missing))
    _, _, y = small_graph()
    with pytest.raises(RuntimeError, match="'dot' program.*apt install graphviz"):
        viz.graph(y)


def test_graph_without_the_dot_program_real_package(monkeypatch, tmp_path):
    pytest.importorskip("graphviz")
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing to execute there
    _, _, y = small_graph()
    with pytest.raises(RuntimeError, match="'dot' program"):
        viz.graph(y, kind="schedule")


def test_graph_passes_the_dot_source_and_returns_text(monkeypatch):
    seen = {}

    def render(module, source, format):
        seen["source"], seen["format"] = source, format
        return b"<svg>fake</svg>"

    monkeypatch.setitem(sys.modules, "graphviz", fake_graphviz(render))
    _, _, y = small_graph()
    assert viz.graph(y, kind="schedule") == "<svg>fake</svg>"
    assert seen == {"source": viz.dot(y, kind="schedule"), "format": "svg"}
