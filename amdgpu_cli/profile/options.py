"""Options shared by the profile reports (the flags of `iree-profile`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class ReportOptions:
    filter: str = "*"            # glob over function keys / op names / event type names
    id: int = -1                 # -1: no id filter
    dispatch_events: bool = False
    counter_samples: bool = False

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
