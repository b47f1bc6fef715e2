"""The one cache type of the layers that remember programs: a bounded map, least
recently used entry forgotten first, safe to share between threads, with counters."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

#: Every cache made (weakly: a jitted function's traces go with it).
_ALL: weakref.WeakSet[Cache] = weakref.WeakSet()
_MISSING = object()


class Cache:
    """A map of entries weighing `capacity` at most (each weighs `weigh(key, value)`,
    1 by default: a number of entries); adding one that makes it heavier forgets the
    least recently used (passing each to `on_forget`, outside the cache's lock), the
    newest entry always kept.

    `hits`, `misses` and `forgotten` count lookups that found an entry, lookups that did
    not, and entries forgotten for room, since the cache was made.
    """

    def __init__(self, name: str, capacity: int,
                 on_forget: Callable[[Hashable, Any], None] | None = None,
                 weigh: Callable[[Hashable, Any], int] | None = None):
        self.name, self.capacity, self.on_forget = name, capacity, on_forget
        self.weigh = weigh or (lambda key, value: 1)
        self.hits = self.misses = self.forgotten = 0
        self.weight = 0  # of the entries kept
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        _ALL.add(self)

    def get(self, key: Hashable, default=None):
        """The entry of `key` (now the most recently used), or `default`."""
        with self._lock:
            # (popped and put back: one comparison of `key` with the kept one, which a
            # step plan's long key makes most of the cost; `move_to_end` would be two)
            value = self._entries.pop(key, _MISSING)
            if value is _MISSING:
                self.misses += 1
                return default
            self._entries[key] = value
            self.hits += 1
            return value

    def put(self, key: Hashable, value) -> None:
        """Keep `value` under `key`, as the most recently used entry."""
        with self._lock:
            old = self._entries.pop(key, _MISSING)
            if old is not _MISSING:
                self.weight -= self.weigh(key, old)
            self._entries[key] = value
            self.weight += self.weigh(key, value)
            forgotten = []
            while self.weight > self.capacity and len(self._entries) > 1:
                forgotten.append(self._entries.popitem(last=False))
                self.weight -= self.weigh(*forgotten[-1])
            self.forgotten += len(forgotten)
        if self.on_forget is not None:
            for entry in forgotten:
                self.on_forget(*entry)

    def pop(self, key: Hashable, default=None):
        """Remove the entry of `key` and return it (`default` if there is none)."""
        with self._lock:
            value = self._entries.pop(key, _MISSING)
            if value is _MISSING:
                return default
            self.weight -= self.weigh(key, value)
            return value

    def clear(self) -> None:
        """Forget every entry (each passed to `on_forget`)."""
        with self._lock:
            entries, self._entries = list(self._entries.items()), OrderedDict()
            self.weight = 0
        if self.on_forget is not None:
            for entry in entries:
                self.on_forget(*entry)

    def values(self) -> list:
        with self._lock:
            return list(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __repr__(self) -> str:
        return (f"<Cache {self.name}: {len(self)} of {self.capacity}, hits={self.hits}, "
                f"misses={self.misses}, forgotten={self.forgotten}>")


def caches() -> list[Cache]:
    """Every cache of remembered programs alive, by name, with its size and counters.

    Examples
    --------
    >>> import numgrad as ng
    >>> "schedules" in [c.name for c in ng.plan.caches()]
    True
    """
    return sorted(_ALL, key=lambda c: c.name)
