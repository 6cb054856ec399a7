"""`plot`: a PNG timeline plus top-functions chart.

The PNG must open, have the documented size, and show something (pixel variance, several colours).
The numbers behind the chart (per-function totals) are checked against iree-profile's export.
"""

from __future__ import annotations

import builtins
import json
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.profile import plot as plot_module
from amdgpu_cli.profile.reader import Bundle
from tests.profile.test_perfetto import device_bundle
from tests.profile.test_export import Synth

matplotlib = pytest.importorskip("matplotlib", reason="plot needs the matplotlib extra")

SIZE = (plot_module.HEIGHT_IN * plot_module.DPI, plot_module.WIDTH_IN * plot_module.DPI)


def read_png(path) -> np.ndarray:
    from matplotlib.image import imread

    return imread(str(path))


def assert_drawn(path) -> np.ndarray:
    image = read_png(path)
    assert image.shape[:2] == SIZE
    rgb = image[..., :3]
    assert float(rgb.var()) > 0
    colours = np.unique((rgb.reshape(-1, 3) * 255).round().astype(np.uint8), axis=0)
    assert len(colours) >= 5
    return image


def test_plot_fixture_bundle(iree_bundles, tmp_path):
    out = tmp_path / "mlp.png"
    plot_module.plot(Bundle.open(iree_bundles["mlp-bench-local-task-all"]), str(out), top=5)
    image = assert_drawn(out)
    # The two dispatch functions get palette colours (blue, orange) in the chart.
    pixels = (image[..., :3] * 255).round().astype(int).reshape(-1, 3)
    for colour in ((0x1f, 0x77, 0xb4), (0xff, 0x7f, 0x0e)):
        assert (np.abs(pixels - colour).sum(axis=1) < 8).sum() > 100
    assert not list(tmp_path.glob(".tmp-*"))            # the temporary file was renamed


def test_function_totals_match_iree_export(iree_bundles, iree_profile):
    path = iree_bundles["conv-bench-local-task-all"]
    result = iree_profile(["export", "--format=ireeperf-jsonl", path])
    totals = defaultdict(lambda: [0, 0])
    for line in result.stdout.splitlines():
        row = json.loads(line)
        if row["record_type"] == "host_execution_event" and row["valid"] and row["key"]:
            totals[row["key"]][0] += row["duration_ns"]
            totals[row["key"]][1] += 1
    _, functions = plot_module.summarize(Bundle.open(path))
    assert {name: [t, n] for name, t, n in functions} == dict(totals)
    assert [t for _, t, _ in functions] == sorted((t for _, t, _ in functions), reverse=True)


def test_plot_device_bundle_and_cli(tmp_path):
    bundle = device_bundle().write(tmp_path / "d.ireeprof")
    out = tmp_path / "d.png"
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from amdgpu_cli.cli.main import profile_main; "
         "profile_main(sys.argv[1:])", "plot", "--output", out, "--top", "3", bundle],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert_drawn(out)
    rows, functions = plot_module.summarize(Bundle.open(bundle))
    assert [label for label, *_ in rows] == ["dev0 q0 s0 dispatch", "dev0 q0 s0 device ops",
                                             "dev0 q0 s0 host execution",
                                             "dev? device-scope host execution"]
    assert {name for name, _, _ in functions} == {"matmul_kernel", 'odd "name"\n\t\x01 é%d',
                                                  "device0/executable2#0"}


def test_dense_rows_and_empty_bundles_still_plot(tmp_path, monkeypatch):
    monkeypatch.setattr(plot_module, "MAX_BARS_PER_ROW", 2)   # force the busy-fraction view
    out = tmp_path / "dense.png"
    plot_module.plot(Bundle.open(device_bundle().write(tmp_path / "d.ireeprof")), str(out))
    assert_drawn(out)
    empty = tmp_path / "empty.png"
    plot_module.plot(Bundle.open(Synth().begin().end().write(tmp_path / "e.ireeprof")),
                     str(empty))
    assert read_png(empty).shape[:2] == SIZE


def test_busy_fraction_is_exact():
    start = np.array([0.0, 5.0, 12.0])
    end = np.array([10.0, 7.0, 13.0])
    busy = plot_module._busy(start, end, np.array([0.0, 5.0, 10.0, 15.0]))
    assert busy.tolist() == [5.0, 7.0, 1.0]


def test_missing_matplotlib_names_the_extra(monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(AmdgpuCliError, match=r"pip install amdgpu_cli\[plot\]"):
        plot_module.plot(Bundle.open(Synth().begin().end().write(tmp_path / "e.ireeprof")),
                         str(tmp_path / "x.png"))
    assert not (tmp_path / "x.png").exists()
