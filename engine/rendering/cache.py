"""A small thread-safe LRU, bounded by entries and by weight (the characters of template
text an entry keeps alive): a count alone let a few near-1 MiB parts hold gigabytes."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

# Characters of template text one process's render caches may keep alive, each cache.
CACHED_TEXT_CHARS = 16_000_000


class LRU:
    """Bounded mapping; the least recently used entries go first when either bound is passed.

    An entry heavier than the whole weight budget is not kept at all.
    """

    def __init__(self, maxsize: int = 512, max_weight: int | None = None) -> None:
        self.maxsize = maxsize
        self.max_weight = max_weight
        self.weight = 0
        self._data: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> object | None:
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return None
            self._data.move_to_end(key)
            return entry[0]

    def put(self, key: Hashable, value: object, weight: int = 0) -> None:
        if self.max_weight is not None and weight > self.max_weight:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.weight -= old[1]
            self._data[key] = (value, weight)
            self.weight += weight
            while len(self._data) > self.maxsize or (
                    self.max_weight is not None and self.weight > self.max_weight):
                _, (_, dropped) = self._data.popitem(last=False)
                self.weight -= dropped

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.weight = 0

    def __len__(self) -> int:
        return len(self._data)
