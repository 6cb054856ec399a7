"""The Python API closed from one thread while others call it (issue 12, finding 4).

Four threads call a loaded module's function (a 192x160 @ 160x224 dynamic matmul: kernels long
enough for close() to land inside one; half of them with numpy arrays, half with DeviceArrays and
device results read back) in a loop while the main thread closes the module, 12 rounds in one
subprocess (a native crash must not take pytest down), on local-sync and local-task. The rules:
the process never crashes; every call that started before close() returned its correct result;
every call after it raised AmdgpuCliError FAILED_PRECONDITION ("module is closed"), as do
`function()`, `upload()` and `DeviceArray.numpy()` of the closed module; close() twice is
harmless. Before close() waited for calls in flight, closing unmapped
the executables under a running kernel: SIGSEGV in the dispatch loop, most rounds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from corpus_util import CORPUS_DIR, compile_corpus

REPO_ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 12

SCRIPT = textwrap.dedent('''
    import sys, threading, time
    import numpy as np
    import amdgpu_cli
    from amdgpu_cli.errors import AmdgpuCliError

    vmfb, device, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = np.random.default_rng(0)
    a = rng.standard_normal((192, 160), np.float32)
    b = rng.standard_normal((160, 224), np.float32)
    expected = a @ b
    wrong = []  # calls that failed otherwise than "module is closed": checked after every round
    for r in range(rounds):
        m = amdgpu_cli.load_module(vmfb, device=device)
        kept = (m.upload(a), m.upload(b))
        f = m.function("matmul_dyn")
        g = m.function("matmul_dyn", device_results=True)
        counts = {"ok": 0, "closed": 0}
        lock = threading.Lock()
        started = threading.Barrier(5)

        def worker(i):
            started.wait()
            while True:
                try:
                    y = f(a, b) if i % 2 else g(*kept).numpy()
                except AmdgpuCliError as error:
                    with lock:
                        if (error.status == "FAILED_PRECONDITION"
                                and "module is closed" in str(error)):
                            counts["closed"] += 1
                        else:
                            wrong.append(repr(error))
                    return
                np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-3)
                with lock:
                    counts["ok"] += 1

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        started.wait()
        time.sleep(0.001 * (r % 7))  # close at different points of the calls
        m.close()
        for t in threads:
            t.join(60)
            assert not t.is_alive(), "a call did not return after close()"
        m.close()  # twice: harmless
        for attempt in (lambda: f(a, b), lambda: m.function("matmul_dyn"), lambda: m.upload(a),
                        lambda: kept[0].numpy(), lambda: m.matmul_dyn(a, b)):
            try:
                attempt()
            except AmdgpuCliError as error:
                if error.status != "FAILED_PRECONDITION":
                    wrong.append(repr(error))
            else:
                wrong.append("a closed module answered")
        if counts["closed"] != 4:
            wrong.append(f"round {r}: {counts}")
    assert not wrong, wrong[:8]
    print("rounds", rounds, "ok")
''')


@pytest.fixture(scope="module")
def matmul_vmfb(tmp_path_factory) -> Path:
    if not (os.environ.get("IREE_COMPILE") or shutil.which("iree-compile")):
        pytest.skip("iree-compile not on PATH")
    out_dir = os.environ.get("IREE_CORPUS_CACHE") or tmp_path_factory.mktemp("api_close")
    return Path(compile_corpus(out_dir, jobs=1, paths=[CORPUS_DIR / "matmul.mlir"])["matmul"])


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_close_while_other_threads_call(device, matmul_vmfb):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]), PYTHONFAULTHANDLER="1")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(matmul_vmfb), device, str(ROUNDS)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip() == f"rounds {ROUNDS} ok"
