"""`amdgpu-replay run --verify`: a replay's results checked against what the captured run read
back.

IREE's captures carry no readback data (the read-only map/unmap records of a result carry only
their ranges), so no replay tool can check a replay's output from the .ireereplay alone. A capture
made with our `--device_replay_results` keeps, beside F, the sidecar `F.results` (msgpack; its
layout is in amdgpu_cli.replay.recorder's docstring): per tensor read back, the ordinal of its
first read-only `buffer.map_range` record, the replay id of the mapped host buffer, the tensor's
root-relative byte range, element type, shape and the bytes the run read. The .ireereplay stays
exactly what IREE's tools accept.

Verification adds one step to the plan at each of those map_range records (the replay ignores
them otherwise): the live buffer's bytes at that point of the execution are read and compared with
the captured ones as iree-run-module's `--expected_output` compares (amdgpu_cli.tooling.expected:
exact for integers, IREE's default absolute and relative tolerances for floats). The outcome is
printed as `--expected_output` prints it: a `[FAILED] result[i]: ...` block per mismatch, or the
`[SUCCESS]` line.
"""

from __future__ import annotations

import os

from amdgpu_cli.errors import AmdgpuCliError, InputFileError

__all__ = ["load_results", "checking_plan", "report"]

FORMAT = "amdgpu-replay-results"


def load_results(replay_path: str) -> list[dict]:
    """The results sidecar of the replay at `replay_path` (`<path>.results`), checked."""
    path = os.fspath(replay_path) + ".results"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise InputFileError(f"no results file '{path}' to verify against (capture with "
                             f"--device_replay_results)") from None
    except OSError as e:
        raise InputFileError(f"failed to read '{path}': {e.strerror or e}") from None
    import msgpack

    try:
        document = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, msgpack.UnpackException, TypeError) as e:
        raise InputFileError(f"'{path}' is not a results file: {e}", status="DATA_LOSS") from None
    try:
        if document.get("format") != FORMAT or document.get("version") != 1:
            raise KeyError("format")
        results = []
        for entry in document["results"]:
            results.append({
                "result_index": int(entry["result_index"]),
                "sequence_ordinal": int(entry["sequence_ordinal"]),
                "buffer_id": int(entry["buffer_id"]),
                "byte_offset": int(entry["byte_offset"]),
                "byte_length": int(entry["byte_length"]),
                "element_type": str(entry["element_type"]),
                "shape": tuple(int(d) for d in entry["shape"]),
                "data": bytes(entry["data"])})
    except (AttributeError, KeyError, TypeError, ValueError):
        raise InputFileError(f"'{path}' is not a version 1 {FORMAT} file",
                             status="DATA_LOSS") from None
    return results


def checking_plan(plan, replay_file, results: list[dict]):
    """(a plan that also checks each result at its map_range record, the outcome list it fills:
    (result_index, failure text or None) in execution order)."""
    from amdgpu_cli.replay.executor import Plan, _Step
    from amdgpu_cli.replay.schema import Op

    wanted = {r["sequence_ordinal"]: r for r in results}
    checks = []
    for record in replay_file.records():
        entry = wanted.get(record.sequence_ordinal)
        if entry is None:
            continue
        if record.operation_code != Op.BUFFER_MAP_RANGE or record.object_id != entry["buffer_id"]:
            raise InputFileError(
                f"results file does not belong to this replay: record "
                f"{record.sequence_ordinal} is not a map of buffer {entry['buffer_id']}",
                status="FAILED_PRECONDITION")
        checks.append(_Step(_check, record, entry))
    if len(checks) != len(wanted):
        raise InputFileError("results file does not belong to this replay: it names records "
                             "the replay does not have", status="FAILED_PRECONDITION")
    outcomes: list = []
    steps = sorted([*plan.steps, *(s._replace(arg=(s.arg, outcomes)) for s in checks)],
                   key=lambda s: s.record.sequence_ordinal)
    return Plan(tuple(steps), plan.object_capacity, plan.record_count,
                plan.copy_targets), outcomes


def _check(ex, record, arg) -> None:
    from amdgpu_cli.replay.schema import ObjectType
    from amdgpu_cli.tooling.element_types import ElementType
    from amdgpu_cli.tooling.expected import Equality, _compare_buffer_views
    from amdgpu_cli.tooling.values import Tensor

    entry, outcomes = arg
    buffer = ex.lookup(record.object_id, ObjectType.BUFFER)
    actual_bytes = buffer.read(entry["byte_offset"], entry["byte_length"])
    try:
        element_type = ElementType.parse(entry["element_type"])
        expected = Tensor.from_bytes(element_type, entry["shape"], entry["data"])
        actual = Tensor.from_bytes(element_type, entry["shape"], actual_bytes)
    except (AmdgpuCliError, ValueError):
        raise InputFileError(f"results file entry for result {entry['result_index']} is not a "
                             f"tensor of its element type and shape", status="DATA_LOSS") from None
    outcomes.append(_compare_buffer_views(entry["result_index"], expected, actual, Equality()))


def report(outcomes) -> tuple[bool, str]:
    """(all matched, what iree-run-module's --expected_output prints: a [FAILED] block per
    mismatch, or the [SUCCESS] line)."""
    from amdgpu_cli.tooling.expected import _SUCCESS

    failures = [text for text in outcomes if text]
    return (False, "".join(failures)) if failures else (True, _SUCCESS)
