"""`layouts.Layout.decode` (struct, no numpy: the metadata model's decoder) against numpy's
reading of the same bytes through schema.py's structured dtypes, for every record layout."""

from __future__ import annotations

import numpy as np
import pytest

from amdgpu_cli.profile import layouts, schema

LAYOUTS = sorted(name for name, value in vars(layouts).items()
                 if isinstance(value, layouts.Layout))


def test_every_schema_layout_has_its_dtype():
    assert len(LAYOUTS) == 26
    for name in LAYOUTS:
        layout, dtype = getattr(layouts, name), getattr(schema, name)
        assert dtype.itemsize == layout.size and list(dtype.names) == layout.names


@pytest.mark.parametrize("name", LAYOUTS)
def test_decode_reads_what_numpy_reads(name):
    layout, dtype = getattr(layouts, name), getattr(schema, name)
    rng = np.random.default_rng(len(name))
    for trial in range(20):
        at = int(rng.integers(0, 16))
        data = rng.integers(0, 256, layout.size + 32, dtype=np.uint8)
        if trial % 4 == 0:
            data[:] = 0xFF  # every field at its largest (or -1 where signed)
        record = np.frombuffer(data[at:at + layout.size].tobytes(), dtype)[0]
        decoded = layout.decode(data.tobytes(), at)
        assert list(decoded) == layout.names
        for field in layout.names:
            value = record[field]
            expected = tuple(int(x) for x in value) if np.ndim(value) else int(value)
            assert decoded[field] == expected and type(decoded[field]) is type(expected), field
