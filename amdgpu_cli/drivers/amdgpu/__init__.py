"""The AMD GPU driver over HSA (libhsa-runtime64 through `hsa_ffi`).

`Driver` is imported on first use, so that importing a leaf module of this package (the target
tables, say) does not load the driver and its HSA bindings.
"""

from __future__ import annotations


def __getattr__(name: str):
    if name == "Driver":
        from .driver import Driver
        return Driver
    raise AttributeError(name)
