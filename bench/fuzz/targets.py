"""Fuzz targets: one harness per parser, each driving the entry points the CLI uses.

Contract of a harness (`Target.run(data)`): feed `data` (arbitrary bytes) to the parser and walk
everything the tools would read from its result. The parser may reject the bytes only by raising
`AmdgpuCliError` (or a subclass), the one error type the CLI prints as a single line; any other
exception (IndexError, struct.error, ValueError, RecursionError, MemoryError, ...) is a bug in the
parser. `one_input(target, data)` is that rule: it swallows project errors and lets anything else
through. A harness never touches files outside `sandbox()` and never runs code from the input.

Targets:
    vmfb               formats.vmfb.load_vmfb + vm.decoder.verify of every function (+ FlatBuffer)
    amdgpu-executable  formats.amdgpu_executable: AMD1 containers and raw HSACO code objects
                       (formats.amdgpu_code_object, formats.elf with any machine, msgpack metadata)
    cda1               formats.cuda_executable.parse_cda1 (CDA1 header, FlatBuffer, IREE's load checks,
                       debug info), then every export and check_device_limits with an H100's limits
    elf                formats.elf.parse_elf for x86_64 plus the embedded-ELF loader's checks that run
                       before anything is mapped (drivers/local/elf_loader: relocations, query symbol,
                       image build in a bytearray; nothing is mapped or run)
    ireeprof           profile.reader.Bundle on the bytes (native and pure-Python walks, compared),
                       the record accessors `cat` uses, check(), typed(strict) per content type,
                       profile.model.Model.build
    input              tooling.io.parse_inputs: the --input grammar against a cconv chosen by the
                       first byte; several inputs separated by newlines; files only in the sandbox
    npy                tooling.npy through `@file.npy` / `*file.npy` inputs (one or many arrays)
    tool-flags         the flag values run and benchmark parse themselves, one per line:
                       --device_profiling_mode (hal.profiling.parse_families, with a preset file
                       written from the input into the sandbox), the capture filters, the flush
                       interval (tooling.profiling.Capture.from_flags, no output path), and
                       --benchmark_min_time (tooling.benchmark.parse_min_time)
    irpa               formats.parameters.open_parameters on a sandbox `.irpa` file (formats.irpa: linked
                       archives, entry table, splat/data entries), then every entry's view
    gguf               the same for `.gguf` (formats.gguf: metadata walk, tensor infos, ggml sizes)
    safetensors        the same for `.safetensors` (formats.safetensors: header length, JSON, offsets)
  Extra (only when named; not in CI):
    ireeprof-reports   every amdgpu-profile report's JSONL rows on the bundle, and the one-pass
                       native reports (summary, statistics, dispatch, executable, command,
                       explain, dispatch --dispatch_events) against their exact paths

Sizes: the `input` harness lowers the function-I/O allocation cap (values._MAX_ALLOCATION) to
16 MiB so that a fuzzed `1000000000xi8` asks for a cap error instead of a gigabyte of zeros, which
the tools would rightly allocate; every other harness runs with the real limits.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Callable

from amdgpu_cli.errors import AmdgpuCliError

__all__ = ["ALL_TARGETS", "EXTRA_TARGETS", "TARGETS", "Target", "one_input", "sandbox"]


@dataclass(frozen=True)
class Target:
    name: str
    run: Callable[[bytes], None]
    description: str


def one_input(target: Target, data: bytes) -> None:
    """Run one input; project errors are the expected rejections, anything else propagates."""
    try:
        target.run(data)
    except AmdgpuCliError:
        pass


# -- sandbox: the only directory the file-reading harnesses see ----------------------------------

_SANDBOX: str | None = None


def sandbox() -> str:
    """A private directory holding a.npy (two small arrays) and b.bin (64 bytes); made once per
    process and removed at interpreter exit (a fuzz worker ends without one: a few bytes stay)."""
    global _SANDBOX
    if _SANDBOX is None:
        import atexit
        import shutil

        from amdgpu_cli.tooling.element_types import ElementType
        from amdgpu_cli.tooling.npy import npy_bytes
        from amdgpu_cli.tooling.values import Tensor

        path = tempfile.mkdtemp(prefix="amdgpu-fuzz-")
        atexit.register(shutil.rmtree, path, True)

        f32 = ElementType.parse("f32")
        i8 = ElementType.parse("i8")
        with open(os.path.join(path, "a.npy"), "wb") as f:
            f.write(npy_bytes(Tensor.from_bytes(f32, [2, 2], bytes(range(16)))))
            f.write(npy_bytes(Tensor.from_bytes(i8, [3], b"\x01\x02\x03")))
        with open(os.path.join(path, "b.bin"), "wb") as f:
            f.write(bytes(range(64)))
        _SANDBOX = path
    return _SANDBOX


# -- vmfb ---------------------------------------------------------------------------------------


def _run_vmfb(data: bytes) -> None:
    from amdgpu_cli.formats.vmfb import load_vmfb
    from amdgpu_cli.vm.decoder import verify

    module = load_vmfb(data)
    for imported in module.imports:
        imported.signature.arguments  # the context splits every import's cconv
    for export in module.exports:
        module.function_label(export.internal_ordinal)
    for ordinal in range(len(module.functions)):
        verify(module, ordinal)


# -- AMDGPU executables -------------------------------------------------------------------------


def _run_amdgpu_executable(data: bytes) -> None:
    from amdgpu_cli.formats.amdgpu_executable import parse_amdgpu_executable

    executable = parse_amdgpu_executable(data)
    for export in executable.exports:
        export.name, export.binding_count
    info = executable.code_object_info
    info.is_generic
    for kernel in info.kernels:
        info.kernel(kernel.name)


# -- CUDA executables ----------------------------------------------------------------------------

# An H100's CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{X,Y,Z} and MAX_SHARED_MEMORY_PER_BLOCK_OPTIN.
_CUDA_LIMITS = ((1024, 1024, 64), 232448)


def _run_cda1(data: bytes) -> None:
    from amdgpu_cli.formats.cuda_executable import check_device_limits, parse_cda1

    executable = parse_cda1(data)
    for export in executable.exports:
        executable.modules[export.module_ordinal]  # the ordinal the driver loads from
        if export.binding_count != len(export.binding_flags):
            raise AssertionError(f"{export.name}: binding_count {export.binding_count} != "
                                 f"{len(export.binding_flags)} flags")
    check_device_limits(executable, *_CUDA_LIMITS)


# -- .ireereplay ---------------------------------------------------------------------------------

def _run_ireereplay(data: bytes) -> None:
    """What `amdgpu-replay dump` (both formats) and the start of `run` read: the container walk,
    every payload's checks and decoding, and the executor's plan (every record decoded once)."""
    import io

    from amdgpu_cli.replay import executor
    from amdgpu_cli.replay.dump import dump
    from amdgpu_cli.replay.reader import ReplayFile

    replay = ReplayFile.from_bytes(data)
    try:
        for fmt in ("text", "jsonl"):
            try:
                dump(replay, io.BytesIO(), fmt)
            except AmdgpuCliError:
                pass
        executor.plan(replay)
    finally:
        replay.close()


# -- embedded ELF (x86_64) ----------------------------------------------------------------------

# Largest image the harness builds in memory; the loader itself allows 1 GiB (MAX_IMAGE_SIZE).
_ELF_BUILD_LIMIT = 1 << 24


def _run_elf(data: bytes) -> None:
    from amdgpu_cli.drivers.local import elf_loader
    from amdgpu_cli.formats.elf import EM_X86_64, parse_elf

    image = parse_elf(data, machine=EM_X86_64)
    image.span()
    # ElfLibrary.__init__ up to the mmap, without mapping: the same checks on the same image.
    library = elf_loader.ElfLibrary.__new__(elf_loader.ElfLibrary)
    page = 4096
    lo, hi = image.span()
    map_lo = lo - lo % page
    size = -(-hi // page) * page - map_lo
    if size <= 0 or size > elf_loader.MAX_IMAGE_SIZE:
        return  # the loader raises ElfLoadError here
    library.size = size
    library._map_lo = map_lo
    library._check_relocations(image)
    query = image.symbol(elf_loader.QUERY_SYMBOL)
    if query is not None and query.info & 0xF == elf_loader.STT_FUNC and query.size:
        library._check_code(image, query.value, elf_loader.QUERY_SYMBOL, query.size)
    if size <= _ELF_BUILD_LIMIT:
        library._bias = 0x7F0000000000 - map_lo  # a plausible mapping address
        library._build_image(image)


# -- .ireeprof ----------------------------------------------------------------------------------


def _open_bundle(data: bytes, pure_python: bool):
    from amdgpu_cli.profile.reader import Bundle

    saved = os.environ.get("AMDGPU_CLI_PURE_PYTHON")
    os.environ["AMDGPU_CLI_PURE_PYTHON"] = "1" if pure_python else "0"
    try:
        return Bundle.from_bytes(data)
    finally:
        if saved is None:
            del os.environ["AMDGPU_CLI_PURE_PYTHON"]
        else:
            os.environ["AMDGPU_CLI_PURE_PYTHON"] = saved


class WalkMismatch(AssertionError):
    """The native and pure-Python record walks disagree (a bug, reported as a crash)."""


def _run_ireeprof(data: bytes) -> None:
    from amdgpu_cli.profile import schema
    from amdgpu_cli.profile.model import Model
    from amdgpu_cli.profile.reader import _native

    bundle = _open_bundle(data, pure_python=True)
    if _native is not None:
        native = _open_bundle(data, pure_python=False)
        same = native.records.dtype == bundle.records.dtype and len(native.records) == len(bundle.records) and all(
            (native.records[field] == bundle.records[field]).all() for field in bundle.records.dtype.names)
        if not same or str(native.error) != str(bundle.error):
            raise WalkMismatch(f"record walks differ: native {len(native.records)} records, "
                               f"{native.error}; python {len(bundle.records)} records, {bundle.error}")
    # What `cat` reads before the break.
    for i in range(len(bundle)):
        bundle.content_type(i), bundle.name(i), bundle.payload(i)
    bundle.payload_offsets()
    bundle.check()
    # Every other command: the typed families it reads, each failing on its own.
    for ct in schema.CONTENT_TYPES:
        if ct.dtype is None:  # the session record has no typed rows
            continue
        try:
            typed = bundle.typed(ct.suffix, strict=True)
        except AmdgpuCliError:
            continue
        if ct.kind == schema.ContentKind.VARIABLE and len(typed):
            typed.tail(0)
    Model.build(bundle)


# -- function I/O -------------------------------------------------------------------------------

# The first byte of an `input` input picks the cconv the values are parsed against.
CCONVS = (None, "r", "i", "I", "f", "F", "rr", "ri", "rI", "fF", "rrr", "i32", "f64", "v", "")

_INPUT_ALLOCATION_CAP = 1 << 24


def _run_input(data: bytes) -> None:
    from amdgpu_cli.tooling import values
    from amdgpu_cli.tooling.io import parse_inputs

    if not data:
        return
    cconv = CCONVS[data[0] % len(CCONVS)]
    # Inputs name files relative to the sandbox only: no separators, so no other path is reachable.
    text = data[1:].decode("utf-8", "surrogateescape").replace("/", "_")
    cap, values._MAX_ALLOCATION = values._MAX_ALLOCATION, _INPUT_ALLOCATION_CAP
    cwd = os.getcwd()
    os.chdir(sandbox())
    try:
        parse_inputs(text.split("\n"), cconv)
    finally:
        os.chdir(cwd)
        values._MAX_ALLOCATION = cap


def _run_tool_flags(data: bytes) -> None:
    from amdgpu_cli.errors import UsageError
    from amdgpu_cli.tooling.benchmark import parse_min_time
    from amdgpu_cli.tooling.profiling import Capture, ProfilingFlags

    lines = data.decode("utf-8", "surrogateescape").split("\n")
    lines += [""] * (8 - len(lines))
    numbers = []
    for line in lines[3:8]:
        try:
            numbers.append(int(line))
        except ValueError:
            numbers.append(-1)
    presets = os.path.join(sandbox(), "presets")
    os.makedirs(presets, exist_ok=True)
    with open(os.path.join(presets, "fz.modes"), "w", encoding="utf-8",
              errors="surrogateescape") as f:
        f.write(lines[2])
    saved = os.environ.get("AMDGPU_PROFILE_PRESETS")
    os.environ["AMDGPU_PROFILE_PRESETS"] = presets
    try:
        Capture.from_flags(ProfilingFlags(
            mode=lines[0], filter_function=lines[1], filter_command_buffer=numbers[0],
            filter_command_index=numbers[1], filter_physical_device=numbers[2],
            filter_queue=numbers[3], flush_interval_ms=numbers[4],
            print_device_statistics=True))
    finally:
        if saved is None:
            del os.environ["AMDGPU_PROFILE_PRESETS"]
        else:
            os.environ["AMDGPU_PROFILE_PRESETS"] = saved
    try:
        parse_min_time(lines[1])
    except UsageError:
        pass


def _run_npy(data: bytes) -> None:
    from amdgpu_cli.tooling.io import parse_inputs

    path = os.path.join(sandbox(), "fuzz.npy")
    with open(path, "wb") as f:
        f.write(data)
    try:
        parse_inputs([f"@{path}"], "r")
    except AmdgpuCliError:
        pass
    parse_inputs([f"*{path}"], None)


# -- parameter files -----------------------------------------------------------------------------

# Splats up to this size are materialized by the harness; larger ones only have their pattern read.
_SPLAT_VIEW_LIMIT = 1 << 16


def _parameter_target(extension: str) -> Callable[[bytes], None]:
    def run(data: bytes) -> None:
        from amdgpu_cli.formats.parameters import open_parameters

        path = os.path.join(sandbox(), f"fuzz.{extension}")
        with open(path, "wb") as f:
            f.write(data)
        with open_parameters(path) as archive:
            for key, entry in archive.entries.items():
                if entry.splat is not None and entry.length > _SPLAT_VIEW_LIMIT:
                    continue
                view = archive.view(key)
                if len(view) != entry.length:
                    raise AssertionError(f"view of {key!r} has {len(view)} bytes, entry says {entry.length}")
                view.release()

    run.__name__ = f"_run_{extension}"
    return run


# Every `amdgpu-profile` command, for the extra target below.
REPORTS = ("cat", "summary", "statistics", "explain", "dispatch", "executable", "command", "queue",
           "memory", "counter", "export")


def _run_ireeprof_reports(data: bytes) -> None:
    import importlib

    from amdgpu_cli.profile.jsonl import write_rows
    from amdgpu_cli.profile.options import ReportOptions
    from amdgpu_cli.profile.reader import Bundle

    class _Null:
        def write(self, text):
            return len(text)

    for command in REPORTS:
        module = importlib.import_module(f"amdgpu_cli.profile.reports.{command}")
        for options in (ReportOptions(), ReportOptions(dispatch_events=True, counter_samples=True)):
            try:
                write_rows(_Null(), module.report(Bundle.from_bytes(data), options))
            except AmdgpuCliError:
                pass
    _compare_one_pass_reports(data)


class OnePassMismatch(AssertionError):
    """A report's one-pass native path and its exact path disagree (a bug, reported as a crash)."""


# Reports with a one-pass native path over a file (`report_file`), which the CLI tries first.
ONE_PASS_REPORTS = ("summary_native", "statistics_native", "dispatch", "executable", "command",
                    "explain_native")


def _compare_one_pass_reports(data: bytes) -> None:
    """Where a one-pass path gives rows for the bytes (as a file), the exact path must give the
    same rows; where it declines (None), nothing is claimed."""
    import importlib
    import io
    import tempfile

    from amdgpu_cli.profile.jsonl import write_rows
    from amdgpu_cli.profile.options import ReportOptions
    from amdgpu_cli.profile.reader import Bundle

    def text(rows) -> str:
        out = io.StringIO()
        write_rows(out, rows)
        return out.getvalue()

    with tempfile.NamedTemporaryFile(suffix=".ireeprof") as f:
        f.write(data)
        f.flush()
        # --dispatch_events: the pass's own event array against the exact path's columns.
        cases = [(name, ReportOptions()) for name in ONE_PASS_REPORTS]
        cases.append(("dispatch", ReportOptions(dispatch_events=True)))
        for name, options in cases:
            module = importlib.import_module(f"amdgpu_cli.profile.reports.{name}")
            exact = importlib.import_module(
                f"amdgpu_cli.profile.reports.{name.removesuffix('_native')}")
            try:
                rows = module.report_file(f.name, options)
            except AmdgpuCliError:
                continue  # raised before the pass (the file header), as the exact path does
            if rows is None:
                continue
            ours = text(rows)
            try:
                expected = text(exact.report(Bundle.from_bytes(data), options))
            except AmdgpuCliError as e:
                raise OnePassMismatch(f"{name}: one pass gave rows, the exact path fails: {e}")
            if ours != expected:
                raise OnePassMismatch(f"{name}: one pass and exact path rows differ")


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("vmfb", _run_vmfb, "vmfb container, FlatBuffer reader, bytecode decoder and verifier"),
    Target("amdgpu-executable", _run_amdgpu_executable,
           "AMD1 container / raw HSACO: ELF, NT_AMDGPU_METADATA msgpack, kernel descriptors"),
    Target("cda1", _run_cda1, "CUDA CDA1 executables (cuda-nvptx-fb): header, FlatBuffer, load checks"),
    Target("elf", _run_elf, "ELF64 x86_64 embedded executables and the loader's pre-map checks"),
    Target("ireeprof", _run_ireeprof, ".ireeprof reader (both walks), typed records, metadata model"),
    Target("ireereplay", _run_ireereplay, ".ireereplay reader, dump (text, jsonl), executor plan"),
    Target("input", _run_input, "--input grammar (shapes, element types, data, files, scalars)"),
    Target("npy", _run_npy, ".npy reader through @file.npy and *file.npy inputs"),
    Target("tool-flags", _run_tool_flags,
           "--device_profiling_* values, presets, --benchmark_min_time"),
    Target("irpa", _parameter_target("irpa"), ".irpa parameter archives (open_parameters, views)"),
    Target("gguf", _parameter_target("gguf"), ".gguf parameter files (open_parameters, views)"),
    Target("safetensors", _parameter_target("safetensors"),
           ".safetensors parameter files (open_parameters, views)"),
)}

# Run only when named: every profile report on fuzzed bundles (the reports' own code, beyond the
# reader and model that `ireeprof` covers).
EXTRA_TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("ireeprof-reports", _run_ireeprof_reports, "every amdgpu-profile report's rows"),
)}
ALL_TARGETS = {**TARGETS, **EXTRA_TARGETS}
