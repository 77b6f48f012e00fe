"""Idle sandboxes kept for the next episode of the same source: zygotes, warm workers."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Protocol, TypeVar


class Kept(Protocol):
    @property
    def alive(self) -> bool: ...


K = TypeVar("K")
T = TypeVar("T", bound=Kept)


class IdleCache(Generic[K, T]):
    """At most `capacity` idle sandboxes by key; the least recently used go first. A subclass
    says how one is made for a key, what its key is, and how it is given up."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._idle: OrderedDict[K, list[T]] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0

    def _make(self, key: K) -> T:
        raise NotImplementedError

    def _key(self, item: T) -> K:
        raise NotImplementedError

    def _discard(self, item: T) -> None:
        raise NotImplementedError

    def _acquire(self, key: K) -> T:
        with self._lock:
            idle = self._idle.get(key)
            while idle:
                item = idle.pop()
                if item.alive:
                    return item
                self._discard(item)
            self.started += 1
        return self._make(key)

    def release(self, item: T) -> None:
        surplus = []
        with self._lock:
            if self._closed or not item.alive:
                surplus.append(item)
            else:
                key = self._key(item)
                self._idle.setdefault(key, []).append(item)
                self._idle.move_to_end(key)
                while sum(len(group) for group in self._idle.values()) > self.capacity:
                    oldest, group = next(iter(self._idle.items()))
                    surplus.append(group.pop(0))
                    if not group:
                        del self._idle[oldest]
        for extra in surplus:
            self._discard(extra)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            items = [item for group in self._idle.values() for item in group]
            self._idle.clear()
        for item in items:
            self._discard(item)
