"""The device commands as a user runs them (subprocesses): `amdgpu-run --list_devices/--dump_devices
/--device=amdgpu` and `amdgpu dump-devices`, with no HSA library, with Debian's real libhsa (no GPU
here), and against softhsa with three agents (gfx942, gfx942, gfx1100)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.iree_tools import iree_compile_or_skip

DEBIAN_LIBHSA = Path("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1")
_ENTRY = "import sys; from amdgpu_cli.cli.main import {0}; {0}(sys.argv[1:])"

ADD_MLIR = """
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def cli(*args, env: dict | None = None, entry: str = "run_main") -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("ROCR_VISIBLE_DEVICES", "IREE_HAL_AMDGPU_LIBHSA_PATH", "SOFTHSA_CONFIG",
                            "AMDGPU_LIBHSA_SKIP_SYSTEM")}
    environ.update(env or {})
    return subprocess.run([sys.executable, "-c", _ENTRY.format(entry), *map(str, args)],
                          capture_output=True, text=True, timeout=60, env=environ)


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture(scope="session")
def amdgpu_vmfb(tmp_path_factory) -> Path:
    """A tiny module compiled for the amdgpu target (gfx942) with the installed iree-compile."""
    compiler = iree_compile_or_skip()
    out = tmp_path_factory.mktemp("amdgpu_vmfb")
    (out / "add.mlir").write_text(ADD_MLIR)
    subprocess.run([compiler, "--iree-hal-target-device=amdgpu", "--iree-rocm-target=gfx942",
                    str(out / "add.mlir"), "-o", str(out / "add.vmfb")], check=True, timeout=300)
    return out / "add.vmfb"


# -- acceptance 1: no HSA library / Debian's libhsa without a GPU ---------------------------------

def test_no_libhsa_anywhere_lists_every_place(amdgpu_vmfb, tmp_path):
    missing_dir, missing_file = tmp_path / "nothing", tmp_path / "libhsa-runtime64.so"
    result = cli("--device=amdgpu", f"--module={amdgpu_vmfb}",
                 f"--amdgpu_libhsa_search_path={missing_dir}",
                 f"--amdgpu-libhsa-search-path={missing_file}",
                 env={"AMDGPU_LIBHSA_SKIP_SYSTEM": "1",
                      "IREE_HAL_AMDGPU_LIBHSA_PATH": str(tmp_path / "env")})
    line = one_error_line(result)
    assert line.startswith("error: NOT_FOUND; HSA/ROCR-Runtime library not found")
    # The search order of reference §3: flags in order (directories as .so.1 then .so), the
    # environment variable's entry; the system names are skipped by the test hook.
    tried = [missing_dir / "libhsa-runtime64.so.1", missing_dir / "libhsa-runtime64.so",
             missing_file, tmp_path / "env" / "libhsa-runtime64.so.1",
             tmp_path / "env" / "libhsa-runtime64.so"]
    positions = [line.index(str(path) + " ") for path in tried]
    assert positions == sorted(positions)
    assert result.stdout == ""


def _needs_debian_libhsa():
    if not DEBIAN_LIBHSA.exists():
        pytest.skip(f"{DEBIAN_LIBHSA} is not installed (apt install libhsa-runtime64-1)")
    if os.path.exists("/dev/kfd"):
        pytest.skip("/dev/kfd exists: this machine may have a usable GPU")


@pytest.mark.parametrize("args", [
    ["--device=amdgpu", "MODULE"],
    ["--list_devices=amdgpu"],
    ["--dump_devices=amdgpu"],
])
@pytest.mark.parametrize("search", [True, False], ids=["search-path", "system-loader"])
def test_debian_libhsa_without_gpu(args, search, amdgpu_vmfb):
    _needs_debian_libhsa()
    args = [f"--module={amdgpu_vmfb}" if a == "MODULE" else a for a in args]
    if search:
        args.append(f"--amdgpu_libhsa_search_path={DEBIAN_LIBHSA.parent}")
    line = one_error_line(cli(*args))
    assert line.startswith(
        "error: RESOURCE_EXHAUSTED; [hsa_init] HSA_STATUS_ERROR_OUT_OF_RESOURCES: ")
    # The line names the file the library was loaded from (the symlink's target).
    assert f"using {DEBIAN_LIBHSA.resolve()}; HSA found no usable GPU (no /dev/kfd)" in line


def test_debian_libhsa_dump_devices_command():
    _needs_debian_libhsa()
    line = one_error_line(cli("dump-devices", "--format=json", entry="main",
                              env={"IREE_HAL_AMDGPU_LIBHSA_PATH": str(DEBIAN_LIBHSA.parent)}))
    assert "RESOURCE_EXHAUSTED; [hsa_init]" in line and "no /dev/kfd" in line


@pytest.mark.parametrize("env", [{"AMDGPU_LIBHSA_SKIP_SYSTEM": "1"}, {}],
                         ids=["no-libhsa", "system-libhsa"])
def test_unnamed_driver_listing_skips_amdgpu(env):
    """IREE lists every driver that can be created and skips the others without a word (here:
    no library at all, or Debian's, whose hsa_init fails without a GPU)."""
    result = cli("--list_devices", env=env)
    assert (result.returncode, result.stderr) == (0, "")
    assert "local-sync://\n" in result.stdout and "amdgpu" not in result.stdout
    result = cli("--dump_devices", env=env)
    assert (result.returncode, result.stderr) == (0, "")
    assert "# Enumerated devices for driver 'amdgpu'\n" + "# " + "=" * 76 + "\n\n" in result.stdout


# -- against softhsa: two gfx942 and one gfx1100 (tests/drivers/amdgpu/softhsa_agents.py) ----------

@pytest.fixture(scope="module")
def softhsa(softhsa_lib, tmp_path_factory) -> dict:
    """`env` selecting softhsa's three-agent machine and the search-path flag that finds it."""
    from tests.drivers.amdgpu.softhsa_agents import write_config

    config = write_config(tmp_path_factory.mktemp("softhsa_cli"))
    return {"env": {"SOFTHSA_CONFIG": str(config), "AMDGPU_LIBHSA_SKIP_SYSTEM": "1"},
            "flag": f"--amdgpu_libhsa_search_path={softhsa_lib}"}


def test_list_devices(softhsa):
    from tests.drivers.amdgpu.softhsa_agents import UUIDS

    result = cli("--list_devices=amdgpu", softhsa["flag"], env=softhsa["env"])
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"amdgpu://\namdgpu://{UUIDS[0]}\namdgpu://{UUIDS[1]}\n"
    everything = cli("--list_devices", softhsa["flag"], env=softhsa["env"]).stdout
    assert result.stdout in everything and "local-sync://\n" in everything
    visible = cli("--list-devices=amdgpu", softhsa["flag"],
                  env={**softhsa["env"], "ROCR_VISIBLE_DEVICES": "2,0"})
    assert visible.stdout == f"amdgpu://\namdgpu://{UUIDS[2]}\n"


def test_dump_devices(softhsa):
    from tests.drivers.amdgpu.softhsa_agents import UUIDS

    result = cli("--dump_devices=amdgpu", softhsa["flag"], env=softhsa["env"])
    assert (result.returncode, result.stderr) == (0, "")
    sep = "# ===" + "-" * 70 + "===\n"
    rule = "# " + "=" * 76 + "\n"
    assert result.stdout.startswith(rule + "# Enumerated devices for driver 'amdgpu'\n" + rule)
    assert (sep + "# --device=amdgpu://\n"
            + "#   ROCR_VISIBLE_DEVICES: 2 Visible GPU Agents (Nodes 1, 2)\n" + sep + "\n"
            ) in result.stdout
    assert (sep + f"# --device=amdgpu://{UUIDS[1]}\n#   AMD Instinct MI300X (Node 2)\n" + sep
            + "\n") in result.stdout
    visible = cli("--dump_devices=amdgpu", softhsa["flag"],
                  env={**softhsa["env"], "ROCR_VISIBLE_DEVICES": "GPU-1100aaaabbbbcccc"})
    assert "#   ROCR_VISIBLE_DEVICES: 1 Visible GPU Agent (Node 3)\n" in visible.stdout
    assert "#   Radeon RX 7900 XTX (Node 3)\n" in visible.stdout and "MI300X" not in visible.stdout


# Every URI form of reference §4.2, each flag its own logical device; several `--device` flags in
# one run, so a URI error on any of them would end the run with that error instead.
GOOD_URIS = ["amdgpu://", "amdgpu://*", "amdgpu:0", "amdgpu://1", "amdgpu://2",
             "amdgpu://GPU-0123456789ABCDEF", "amdgpu://GPU-fedcba9876543210", "amdgpu://0,1",
             "amdgpu://1,0", "amdgpu://GPU-0123456789abcdef,1",
             "amdgpu://1,1,0,GPU-FEDCBA9876543210"]


@pytest.mark.parametrize("devices", [["amdgpu"], GOOD_URIS])
def test_good_uris_reach_the_device(devices, softhsa, amdgpu_vmfb):
    """Every device is selected and created, and the module runs on the first (softhsa does not
    compute IREE's kernels, so only the shape of the result is checked)."""
    result = cli(*[f"--device={d}" for d in devices], f"--module={amdgpu_vmfb}",
                 "--input=4xf32=1", "--input=4xf32=2", softhsa["flag"], env=softhsa["env"])
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.startswith("EXEC @add\nresult[0]: hal.buffer_view\n4xf32=")


@pytest.mark.parametrize("device, status, detail", [
    ("amdgpu://GPU-0000000000000000", "NOT_FOUND", "no GPU agent with UUID `GPU-0000000000000000`"),
    ("amdgpu://3", "INVALID_ARGUMENT", "device ordinal `3` out of range; 3 GPU devices available"),
    ("amdgpu://x", "INVALID_ARGUMENT", "invalid device specifier `x`"),
    ("amdgpu://0?k=v", "INVALID_ARGUMENT", "do not support key/value parameter 'k'"),
    ("amdgpu://0,2", "INCOMPATIBLE", "GPU agent 1 in the topology is incompatible"),
])
def test_bad_uris_are_one_line(device, status, detail, softhsa, amdgpu_vmfb):
    result = cli(f"--device={device}", f"--module={amdgpu_vmfb}", softhsa["flag"],
                 env=softhsa["env"])
    line = one_error_line(result)
    assert line.startswith(f"error: {status}; ") and detail in line and device in line
    assert result.stdout == ""


def test_rocr_visible_devices_renumbers_ordinals(softhsa, amdgpu_vmfb):
    env = {**softhsa["env"], "ROCR_VISIBLE_DEVICES": "2"}
    result = cli("--device=amdgpu://1", f"--module={amdgpu_vmfb}", softhsa["flag"], env=env)
    assert "device ordinal `1` out of range; 1 GPU devices available" in one_error_line(result)


def test_dump_devices_command_json(softhsa):
    from tests.drivers.amdgpu.softhsa_agents import CONFIG, UUIDS

    result = cli("dump-devices", "--format=json", softhsa["flag"], entry="main",
                 env=softhsa["env"])
    assert (result.returncode, result.stderr) == (0, "")
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 1 and doc["library"].endswith("libhsa-runtime64.so")
    gpus = doc["gpus"]
    assert [g["uri"] for g in gpus] == [f"amdgpu://{u}" for u in UUIDS]
    assert [g["in_default_device"] for g in gpus] == [True, True, False]
    for gpu, config in zip(gpus, CONFIG["agents"]):
        assert (gpu["product_name"], gpu["isas"], gpu["node"], gpu["chip_id"],
                gpu["compute_units"], gpu["wavefront_size"]) == (
            config["product_name"], [config["isa"]], config["node"], config["chip_id"],
            config["compute_units"], config["wavefront_size"])
        assert [(p["flags"], p["size"]) for p in gpu["pools"]] == [
            (pool["flags"], pool["size"]) for pool in config["pools"]]
    assert [g["host_cpu"]["node"] for g in gpus] == [0, 1, 0]
    assert [[sorted(p["flags"]) for p in c["pools"]] for c in doc["cpus"]] == [
        [["fine", "kernarg_init"], ["fine"], ["coarse"]]] * 2
    visible = cli("dump-devices", "--format=json", softhsa["flag"], entry="main",
                  env={**softhsa["env"], "ROCR_VISIBLE_DEVICES": "1,0"})
    assert [g["uuid"] for g in json.loads(visible.stdout)["gpus"]] == [UUIDS[1], UUIDS[0]]


def test_dump_devices_command_text(softhsa):
    from tests.drivers.amdgpu.softhsa_agents import UUIDS

    result = cli("dump-devices", softhsa["flag"], entry="main", env=softhsa["env"])
    assert (result.returncode, result.stderr) == (0, "")
    out = result.stdout
    assert out.startswith("3 GPU agents, 2 CPU agents (HSA runtime ")
    assert "\x1b[" not in out  # plain text when stdout is not a terminal
    for ordinal, uuid in enumerate(UUIDS):
        assert f"GPU {ordinal}  amdgpu://{uuid}  (amdgpu://{ordinal})\n" in out
    assert "  product         Radeon RX 7900 XTX\n" in out
    assert "  isa             amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-\n" in out
    assert "  compute units   96\n  wavefront size  32\n" in out
    assert "  chip id         0x744c\n" in out
    assert out.count("192 GiB") == 8 and out.count("24 GiB") == 4 and "2 MiB" in out
