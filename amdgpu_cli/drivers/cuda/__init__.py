"""The NVIDIA GPU driver over the CUDA driver API (libcuda through `cuda_ffi`).

`Driver` is imported on first use, so that importing a pure leaf module (URI parsing, the dump
formatter, parameter packing) neither loads cffi declarations nor looks for libcuda.
"""

from __future__ import annotations


def __getattr__(name: str):
    if name == "Driver":
        from .driver import Driver
        return Driver
    raise AttributeError(name)
