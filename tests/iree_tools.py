"""IREE 3.13.0's compiler for tests that build their modules at run time: found as
examples/compile.py finds it ($IREE_COMPILE, else PATH), or the test is skipped."""

from __future__ import annotations

import pytest

from examples.compile import CompileError, iree_compile_binary


def iree_compile_or_skip(reason: str = "iree-compile not on PATH") -> str:
    """Path of iree-compile; skips the calling test (with `reason`) when there is none."""
    try:
        return iree_compile_binary()
    except CompileError:
        pytest.skip(reason)
