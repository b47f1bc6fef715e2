"""The one cache type of the layers that remember programs (`numgrad.plan.cache`), and
`numgrad.plan.clear`: a program run after everything is forgotten gives the same bits."""

import gc
import threading

import numpy as np
import pytest

import numgrad as ng
from numgrad import capture
from numgrad.plan import Cache, prepared, recipes, schedules, step_plans


def test_a_cache_forgets_the_least_recently_used_entry_first():
    forgotten = []
    cache = Cache("test lru", 2, lambda key, value: forgotten.append((key, value)))
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert forgotten == [("b", 2)]
    assert "b" not in cache and cache.get("b", "none") == "none"
    assert (cache.hits, cache.misses, cache.forgotten, len(cache)) == (1, 1, 1, 2)
    cache.clear()
    assert len(cache) == 0 and sorted(forgotten) == [("a", 1), ("b", 2), ("c", 3)]


def test_a_cache_of_weighed_entries_forgets_until_it_weighs_its_capacity():
    forgotten = []
    cache = Cache("test weights", 10, lambda key, value: forgotten.append(key),
                  weigh=lambda key, value: value)
    for key, weight in (("a", 4), ("b", 3), ("c", 2)):
        cache.put(key, weight)
    assert cache.weight == 9 and not forgotten
    cache.put("b", 5)  # b weighs 5 now: 11 in all, "a" goes
    assert forgotten == ["a"] and cache.weight == 7
    cache.put("d", 20)  # heavier than the capacity alone: kept, every other one goes
    assert forgotten == ["a", "c", "b"] and cache.weight == 20 and len(cache) == 1
    assert cache.pop("d") == 20 and cache.weight == 0


def test_a_cache_keeps_none_and_false_as_entries():
    cache = Cache("test falsy", 4)
    cache.put("none", None)
    cache.put("false", False)
    assert cache.get("none", "missing") is None and cache.get("false", "missing") is False
    assert cache.get("absent", "missing") == "missing"
    assert cache.pop("none", "missing") is None and "none" not in cache


def test_a_cache_calls_what_forgets_outside_its_lock():
    # `on_forget` may use the cache (a plan letting go of its arrays may run others):
    # called under the lock, it would deadlock.
    cache = Cache("test reentrant", 1)
    cache.on_forget = lambda key, value: cache.get(key)
    cache.put(1, "one")
    cache.put(2, "two")
    assert cache.forgotten == 1 and list(cache.values()) == ["two"]


def test_a_cache_shared_by_threads_stays_bounded_and_counts_every_lookup():
    cache, rounds, threads = Cache("test threads", 16), 2000, 4

    def work(seed):
        rng = np.random.default_rng(seed)
        for key in rng.integers(0, 40, rounds):
            if cache.get(int(key)) is None:
                cache.put(int(key), int(key))

    workers = [threading.Thread(target=work, args=(s,)) for s in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(cache) == 16
    assert cache.hits + cache.misses == rounds * threads
    assert all(cache.get(k, k) == k for k in range(40))  # no entry under another key


def test_every_layer_keeps_what_it_remembers_in_one_cache_type():
    names = {c.name for c in ng.plan.caches()}
    assert {"schedules", "backward recipes", "step plans",
            "prepared plans holding arrays"} <= names
    for layer in (schedules.CACHE, recipes.CACHE, step_plans.CACHE, prepared.HOLDING):
        assert isinstance(layer, Cache)


def test_a_jitted_functions_traces_go_with_it():
    @ng.jit
    def double_of_a_dropped_function(x):
        return x * 2.0

    double_of_a_dropped_function(ng.tensor([1.0]))
    name = "ng.jit traces of double_of_a_dropped_function"
    assert name in [c.name for c in ng.plan.caches()]
    del double_of_a_dropped_function
    gc.collect()
    assert name not in [c.name for c in ng.plan.caches()]


def test_a_jitted_function_keeps_its_latest_signatures(monkeypatch):
    monkeypatch.setattr(capture, "SIGNATURES_KEPT", 2)

    @ng.jit
    def f(x):
        return (x * x).sum()

    for n in (1, 2, 3, 3, 2):  # the signature of 1 is forgotten when 3 comes
        f(ng.ones(n))
    assert f.traces == 3
    assert f(ng.ones(1)).item() == 1.0 and f.traces == 4


def _training_run(steps=8):
    """An eager MLP trained with a learning rate that changes at every step, and a
    jitted loss: every value and gradient, as arrays."""
    rng = np.random.default_rng(3)
    w1 = ng.tensor(rng.standard_normal((4, 6)) * 0.5, requires_grad=True)
    w2 = ng.tensor(rng.standard_normal((6, 1)) * 0.5, requires_grad=True)
    x, y = ng.tensor(rng.standard_normal((5, 4))), ng.tensor(rng.standard_normal((5, 1)))
    loss_of = ng.jit(lambda a, b: ((a @ b).tanh() ** 2).mean())
    out = []
    for k in range(steps):
        loss = (((x @ w1).tanh() @ w2 - y) ** 2).mean()
        loss.backward()
        with ng.no_grad():
            for w in (w1, w2):
                w -= (0.3 * 0.9 ** k) * w.grad
                w.grad = None
        out += [loss.numpy(), w1.numpy().copy(), loss_of(x, w1).numpy()]
    return out


@pytest.mark.parametrize("when", ["before", "between runs"])
def test_a_program_run_after_clear_gives_the_same_bits(when, monkeypatch):
    if when == "before":
        ng.plan.clear()
    first = _training_run()
    assert len(step_plans.CACHE) >= 1  # (the loop's plan was kept: clear has work)
    ng.plan.clear()
    assert all(len(c) == 0 for c in ng.plan.caches())
    again = _training_run()
    monkeypatch.setattr(ng.plan, "ON", False)
    nothing_remembered = _training_run()
    for a, b, c in zip(first, again, nothing_remembered):
        assert a.tobytes() == b.tobytes() == c.tobytes()


def test_static_arguments_key_by_structure_and_refuse_unknown_kinds():
    # Slices by their bounds, index arrays by dtype and shape (their contents are values),
    # inside tuples too; hashable arguments as they are; other kinds refused.
    import numpy as np

    from numgrad.arguments import Unhashable, hashable

    index = np.arange(3)
    assert hashable((slice(None), None)) == (("slice", None, None, None), None)
    assert hashable((index, slice(1, 2))) == (("array", index.dtype.str, (3,)),
                                              ("slice", 1, 2, None))
    assert hashable(((slice(2), 0), 1)) == ((("slice", None, 2, None), 0), 1)
    assert hashable(((1, 2), (3, 4))) == ((1, 2), (3, 4))
    assert hashable((0, 2)) == (0, 2) and hashable(None) is None
    for unknown in ([1], (0, [1]), {1: 2}):
        with pytest.raises(Unhashable):
            hashable(unknown)


def test_a_prepared_plan_is_prepared_again_once_half_its_interpreted_launches_may_compile(
        monkeypatch):
    # (The tiered target's worker delivers kernels one at a time; a plan of many steps
    # prepared again at each would cost more than the launches one kernel interprets.)
    from types import SimpleNamespace

    from numgrad import kernels

    ready: set = set()
    plan = SimpleNamespace(
        waiting=[("a", (3,)), ("b", (3,)), ("b", (3,)), ("c", (3,))],
        checked=kernels.newly_compiled,
        backend=SimpleNamespace(loadable=lambda program, shape: program in ready))

    def deliver(name):
        ready.add(name)
        monkeypatch.setattr(kernels, "newly_compiled", kernels.newly_compiled + 1)

    assert not prepared.PreparedPlan.stale(plan)
    deliver("a")
    assert not prepared.PreparedPlan.stale(plan)  # one launch of four may run compiled
    deliver("c")
    assert prepared.PreparedPlan.stale(plan)  # two of four: prepared again
    assert not prepared.PreparedPlan.stale(plan)  # nothing delivered since
    plan.waiting = [("b", (3,)), ("b", (3,))]  # (what the plan prepared again waits on)
    deliver("b")
    assert prepared.PreparedPlan.stale(plan)
