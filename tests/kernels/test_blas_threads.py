"""BLAS's threads while the compile worker compiles (`numgrad.kernels.blas_threads`):
at most one fewer than the cores, a library's own lower count kept, each library's
own count given back. (In this process: each test sets the counts it starts from, and
gives them back.)"""

import sys
import types

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from numgrad.kernels import blas_threads


def _threads() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


@pytest.fixture
def three_threads(monkeypatch):
    """Every BLAS library at three threads, looked at afresh."""
    monkeypatch.setattr(blas_threads, "_looked_at", 0)
    with threadpool_limits(3, user_api="blas"):
        yield
        blas_threads.restore()


def test_blas_runs_on_a_core_fewer_and_gets_its_threads_back(three_threads, monkeypatch):
    monkeypatch.setattr(blas_threads, "cores", lambda: 2)
    blas_threads.lower()
    assert blas_threads.lowered() and set(_threads()) == {1}
    blas_threads.restore()
    assert not blas_threads.lowered() and set(_threads()) == {3}


def test_a_library_on_fewer_threads_keeps_its_count(three_threads, monkeypatch):
    monkeypatch.setattr(blas_threads, "cores", lambda: 8)
    blas_threads.lower()
    assert not blas_threads.lowered() and set(_threads()) == {3}


def test_libraries_are_looked_at_again_after_an_import(three_threads, monkeypatch):
    """(A library comes with a module: SciPy's, at its first triangular solve.)"""
    monkeypatch.setattr(blas_threads, "cores", lambda: 2)
    blas_threads.lower()
    with threadpool_limits(3, user_api="blas"):  # (as a library loaded since would be)
        blas_threads.lower()
        assert set(_threads()) == {3}
        monkeypatch.setitem(sys.modules, "a_new_module", types.ModuleType("a_new_module"))
        blas_threads.lower()
        assert set(_threads()) == {1}
