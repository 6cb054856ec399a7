"""Shared pytest fixtures.

iree_bundles:  session-scoped {key: Path} of real .ireeprof bundles built with
               the installed IREE tools (see tests/iree_bundles.py). Set
               IREE_BUNDLE_CACHE=DIR to build into / reuse a persistent DIR.
iree_profile:  callable(args) -> CompletedProcess running the real iree-profile.
corpus_build:  session-scoped ({stem: vmfb Path}, {stem: compile error}) of tests/corpus/*.mlir
               compiled for llvm-cpu (IREE_CORPUS_CACHE=DIR keeps them between sessions).
vmfbs:         corpus_build's modules, failing on compile errors.
iree_run:      callable(args) -> CompletedProcess running the real iree-run-module.
jsonl_rows:    helper, parse JSON-lines text into a list of dicts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_TESTS_DIR = Path(__file__).resolve().parent
if str(_TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(_TESTS_DIR))

from iree_bundles import build_bundles, jsonl_rows, tools_available  # noqa: E402,F401


def _register_test_drivers() -> None:
    """The reference `null` driver (hal/null.py: transfers only, no dispatch) is a test double:
    the tests register it in this process's default registry; the product lists only drivers a
    user can run a model on."""
    from amdgpu_cli.hal import null
    from amdgpu_cli.hal.registry import default_registry

    registry = default_registry()
    if "null" not in registry.names():
        registry.register("null", null.NullDriver, "reference host driver (no dispatch)")


_register_test_drivers()


@pytest.fixture(scope="session")
def iree_bundles(tmp_path_factory) -> dict[str, Path]:
    if not tools_available():
        pytest.skip("IREE tools (iree-compile, iree-run-module, iree-benchmark-module) not on PATH")
    cache = os.environ.get("IREE_BUNDLE_CACHE")
    out_dir = Path(cache) if cache else tmp_path_factory.mktemp("bundles")
    return build_bundles(out_dir)


@pytest.fixture(scope="session")
def iree_profile():
    binary = os.environ.get("IREE_PROFILE") or shutil.which("iree-profile")
    if not binary:
        pytest.skip("iree-profile not on PATH")

    def run(args: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(
            [binary, *[str(a) for a in args]],
            capture_output=True,
            encoding="utf-8",
            errors="replace",  # corrupt bundles can make iree-profile print raw non-UTF-8 bytes
            timeout=120,
        )

    return run


@pytest.fixture(scope="session")
def corpus_build(tmp_path_factory):
    """The amdgpu-run corpus compiled once per session: (vmfbs, compile errors)."""
    from corpus_util import compile_corpus

    if not (os.environ.get("IREE_COMPILE") or shutil.which("iree-compile")):
        pytest.skip("iree-compile not on PATH")
    out_dir = os.environ.get("IREE_CORPUS_CACHE") or tmp_path_factory.mktemp("corpus")
    errors: dict[str, str] = {}
    vmfbs = compile_corpus(out_dir, jobs=2, errors=errors)
    return vmfbs, errors


@pytest.fixture(scope="session")
def vmfbs(corpus_build) -> dict[str, Path]:
    """{stem: vmfb Path} of the corpus; compile errors fail the test."""
    built, errors = corpus_build
    assert not errors, f"corpus models failed to compile: {errors}"
    return built


@pytest.fixture(scope="session")
def iree_run():
    """`iree_run(args) -> CompletedProcess`: iree-run-module ($IREE_RUN_MODULE or PATH), text I/O."""
    binary = os.environ.get("IREE_RUN_MODULE") or shutil.which("iree-run-module")
    if not binary:
        pytest.skip("iree-run-module not on PATH")

    def call(args) -> subprocess.CompletedProcess:
        return subprocess.run([binary, *map(str, args)], capture_output=True, text=True,
                              timeout=120)
    return call


# ---- softhsa (tests/softhsa): the software HSA runtime the amdgpu tests run against ----


@pytest.fixture(scope="session")
def softhsa_lib(tmp_path_factory) -> Path:
    """Directory holding a freshly built softhsa `libhsa-runtime64.so` (built once per session)."""
    from tests.softhsa.build import build

    return build(tmp_path_factory.mktemp("softhsa")).parent


@pytest.fixture
def softhsa_env(tmp_path):
    """`softhsa_env(config=None, **variables) -> dict`: a copy of os.environ for a subprocess with
    SOFTHSA_CONFIG naming `config` written as JSON (None: softhsa's default single gfx942), no
    inherited ROCR_VISIBLE_DEVICES, and `variables` added on top."""
    import itertools
    import json

    counter = itertools.count()

    def make(config: dict | None = None, **variables: str) -> dict:
        env = dict(os.environ)
        env.pop("ROCR_VISIBLE_DEVICES", None)
        env.pop("SOFTHSA_CONFIG", None)
        if config is not None:
            path = tmp_path / f"softhsa-config-{next(counter)}.json"
            path.write_text(json.dumps(config))
            env["SOFTHSA_CONFIG"] = str(path)
        env.update(variables)
        return env

    return make
