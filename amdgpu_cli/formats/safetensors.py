"""safetensors: layout and tensor index parser.

Layout (huggingface/safetensors; IREE `io/formats/safetensors/safetensors_parser.c`):

    u64 header_length (little-endian)
    header_length bytes of JSON: {"NAME": {"dtype": "F16", "shape": [..], "data_offsets": [B, E]},
                                  ..., "__metadata__": {...} (optional, ignored)}
    data: B and E are relative to the end of the header; the tensor is data[B:E]

As IREE does, only `data_offsets` is read (dtype and shape are not checked against the length),
entries keep the header's order, and ranges may overlap or leave gaps. Checks and messages follow
IREE's: the header must fit the file, each entry must be an object with `data_offsets` (NOT_FOUND
otherwise), the offsets must be two unsigned 64-bit integers with begin <= end <= data size.

The JSON is read by Python's strict parser (RFC 8259, UTF-8), where IREE's own is lenient
(comments, trailing commas) and keeps a key's escapes undecoded; safetensors writers emit plain
JSON, so the two agree on real files. IREE's `strtoull` also takes `-1` or `1.5` as an offset;
here those are the "failed to parse entry data offsets" error.
"""

from __future__ import annotations

import json
import struct

from amdgpu_cli.formats.parameters import ParameterEntry, ParameterFormatError

__all__ = ["HEADER_LENGTH", "METADATA_KEY", "parse"]

HEADER_LENGTH = struct.Struct("<Q")
METADATA_KEY = "__metadata__"
_U64_LIMIT = 1 << 64


def _error(message: str, status: str) -> ParameterFormatError:
    return ParameterFormatError(message, status=status)


class _Object(list):
    """A JSON object as its (key, value) pairs, in order, duplicates kept (IREE's index keeps them)."""


def _offsets(value) -> tuple[int, int] | None:
    if (type(value) is list and len(value) == 2
            and all(type(v) is int and 0 <= v < _U64_LIMIT for v in value)):
        return value[0], value[1]
    return None


def parse(data) -> list[ParameterEntry]:
    """The tensors of a safetensors file (bytes-like), in header order."""
    data = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
    remaining = len(data)
    if remaining < HEADER_LENGTH.size:
        raise _error(f"insufficient capacity for safetensors header length (need at least "
                     f"{HEADER_LENGTH.size} bytes but have {remaining})", "OUT_OF_RANGE")
    (header_length,) = HEADER_LENGTH.unpack_from(data, 0)
    remaining -= HEADER_LENGTH.size
    if remaining < header_length:
        raise _error(f"insufficient capacity for safetensors header contents (declared as "
                     f"{header_length} but only {remaining} bytes available)", "OUT_OF_RANGE")
    base = HEADER_LENGTH.size + header_length
    data_size = remaining - header_length

    try:
        text = bytes(data[HEADER_LENGTH.size:base]).decode("utf-8")
        pairs = json.loads(text, object_pairs_hook=_Object)
    except UnicodeDecodeError as e:
        raise _error(f"safetensors header is not UTF-8 ({e.reason} at byte {e.start})",
                     "INVALID_ARGUMENT") from None
    except json.JSONDecodeError as e:
        raise _error(f"safetensors header is not valid JSON: {e.msg} at byte {e.pos}",
                     "INVALID_ARGUMENT") from None
    except (ValueError, RecursionError) as e:  # 4300+ digit integers; nesting past the stack
        raise _error(f"safetensors header is not valid JSON: {type(e).__name__}", "INVALID_ARGUMENT") from None
    if not isinstance(pairs, _Object):
        raise _error("missing object {", "INVALID_ARGUMENT")

    entries = []
    for key, value in pairs:
        if key == METADATA_KEY:
            continue
        if not isinstance(value, _Object):
            raise _error(f"missing object {{; entry '{key}'", "INVALID_ARGUMENT")
        found = [v for k, v in value if k == "data_offsets"]
        if not found:
            raise _error(f"JSON key 'data_offsets' not found; entry '{key}'", "NOT_FOUND")
        offsets = _offsets(found[0])
        if offsets is None:
            try:
                text = json.dumps(found[0])[:80]
            except RecursionError:
                text = "..."
            raise _error(f"failed to parse entry data offsets `{text}`", "INVALID_ARGUMENT")
        begin, end = offsets
        if begin > end or end > data_size:
            raise _error(f"entry has data offsets outside of the available data (begin={begin}, "
                         f"end={end}, available={data_size})", "INVALID_ARGUMENT")
        entries.append(ParameterEntry(key, end - begin, base + begin, None))
    return entries
