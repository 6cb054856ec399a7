"""Options shared by the profile reports (the flags of `iree-profile`)."""

from __future__ import annotations

import re
from functools import lru_cache


class ReportOptions:
    """The report flags: `filter` (a glob over function keys, op names or event type names), `id`
    (-1: no id filter), `dispatch_events`, `counter_samples`. Read-only once made."""

    __slots__ = ("filter", "id", "dispatch_events", "counter_samples")

    def __init__(self, filter: str = "*", id: int = -1, dispatch_events: bool = False,
                 counter_samples: bool = False):
        for name, value in zip(self.__slots__, (filter, id, dispatch_events, counter_samples)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"ReportOptions is read-only ({name})")

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other) -> bool:
        return isinstance(other, ReportOptions) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return "ReportOptions(" + ", ".join(
            f"{name}={getattr(self, name)!r}" for name in self.__slots__) + ")"

    def matches(self, key: str) -> bool:
        return key_matches(key, self.filter)


@lru_cache(maxsize=256)
def _pattern(glob: str) -> re.Pattern:
    parts = [".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob]
    return re.compile("".join(parts) + r"\Z", re.DOTALL)


def key_matches(key: str, glob: str) -> bool:
    """IREE's glob: `*` any run, `?` one character; empty or `*` matches everything."""
    if not glob or glob == "*":
        return True
    return _pattern(glob).match(key) is not None
