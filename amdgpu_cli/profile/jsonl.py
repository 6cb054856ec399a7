"""JSON Lines rows written the way IREE's profile tools write them.

IREE prints integers in decimal (u64 unsigned), doubles with a fixed number of decimals (`%.3f`
unless a field says otherwise), strings with its own escaping (`"` `\\` `\\b\\f\\n\\r\\t`, other bytes
below 0x20 as `\\u00XX`, everything else passed through) and `null` for absent values. Rows built
here are plain dicts (or mappings) in IREE's key order; `Fixed` marks a double with other than 3
decimals. Per-event rows come as row blocks (reports/toolkit.py) that render themselves natively.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, TextIO


class Fixed(float):
    """A float printed with `digits` decimals (IREE's `%.<digits>f`)."""

    digits: int

    def __new__(cls, value: float, digits: int = 3) -> "Fixed":
        obj = super().__new__(cls, value)
        obj.digits = digits
        return obj


class Raw(str):
    """Text already formatted as JSON (e.g. `%.17g` doubles); written as is."""


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE_TABLE = {i: f"\\u{i:04x}" for i in range(0x20)}
_ESCAPE_TABLE.update({ord(k): v for k, v in _ESCAPES.items()})


def string(value: str) -> str:
    if value.isprintable() and '"' not in value and "\\" not in value:
        return '"' + value + '"'
    return '"' + value.translate(_ESCAPE_TABLE) + '"'


def value(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, Raw):
        return v
    if isinstance(v, str):
        return string(v)
    if isinstance(v, Fixed):
        return "%.*f" % (v.digits, v)
    if isinstance(v, float):
        return "%.3f" % v
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return dumps(v)
    return str(int(v))


def dumps(row: dict[str, Any]) -> str:
    return "{" + ",".join(f'"{k}":{value(v)}' for k, v in row.items()) + "}"


def write_rows(out: TextIO, rows: Iterable[dict[str, Any]]) -> None:
    """Writes rows as JSON Lines. `rows` may also be a report's `toolkit.Rows` (or anything with
    `parts()`): its row blocks render themselves (`write_jsonl`), in native code."""
    parts = rows.parts() if hasattr(rows, "parts") else rows
    write = out.write
    pending: list[str] = []
    try:
        for row in parts:
            block_writer = getattr(row, "write_jsonl", None)
            if block_writer is not None:
                if pending:
                    write("".join(pending))
                    pending = []
                block_writer(out)
                continue
            pending.append(dumps(row))
            pending.append("\n")
            if len(pending) >= 4096:
                write("".join(pending))
                pending = []
    finally:  # rows before a failure are out, as IREE's are
        if pending:
            write("".join(pending))


class Rows:
    """A report's rows in order: dicts and row blocks (anything with `write_jsonl`). Iterates one
    row at a time; `parts()` gives the dicts and blocks themselves (what `write_rows` renders)."""

    def __init__(self, parts: Iterable):
        self._parts = iter(parts)
        self._current: Iterator | None = None

    def parts(self) -> Iterator:
        return self._parts

    def __iter__(self) -> "Rows":
        return self

    def __next__(self):
        while True:
            if self._current is not None:
                row = next(self._current, None)
                if row is not None:
                    return row
                self._current = None
            part = next(self._parts)
            if hasattr(part, "write_jsonl"):
                self._current = iter(part)
            else:
                return part
