"""`--expected_output` checking of amdgpu-run, exactly as iree-run-module checks.

What this module owns
* `Equality`: IREE's comparison flags (`--equality_mode`, `--expected_*_threshold`,
  `--expected_rtol`).
* `compare_expected`: expected values are parsed with the `--input` grammar (`io.parse_inputs`)
  and matched against the results with IREE's matchers, tolerances and `[FAILED]` /
  `[SUCCESS]` messages, including its 3.13.0 quirk that scalar results never match.

Badly formed expected values raise `FunctionIOError` (or `InputFileError`) with
`; parsing expected function outputs` appended.

numpy is imported when values are compared, not with the module.

Threading: none; every call is self-contained.

Sources: IREE runtime/src/iree/tooling/{comparison.cc,buffer_view_matchers.c,process_results.c}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.tooling.element_types import F16, F32, F64, BF16, ElementType
from amdgpu_cli.tooling.io import parse_inputs
from amdgpu_cli.tooling.values import (
    DEFAULT_MAX_ELEMENT_COUNT,
    FunctionIOError,
    Tensor,
    Value,
    _bits,
    _element_formatter,
    _flat_elements,
    _normalize,
    _numpy_scalar,
    _scalar_name,
    _type_name,
    _widen,
    format_buffer_view,
    numpy_scalars,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Equality", "compare_expected"]

@dataclass(frozen=True)
class Equality:
    """IREE's comparison flags: `--equality_mode`, `--expected_*_threshold`, `--expected_rtol`."""

    mode: str = "approximate"
    f16_atol: float = 0.001
    f32_atol: float = 0.0001
    f64_atol: float = 0.0001
    bf16_atol: float = 0.01
    rtol: float = 1e-5

    def __post_init__(self):
        if self.mode not in ("approximate", "exact"):
            raise FunctionIOError(
                f"unknown equality mode '{self.mode}' (expected approximate or exact)"
            )

    def atol_for(self, element_type: ElementType) -> float | None:
        """The absolute tolerance of a float type (flags are C floats except f64's)."""
        import numpy as np

        f32 = lambda x: float(np.float32(x))  # noqa: E731
        return {
            F16: lambda: f32(self.f16_atol),
            F32: lambda: f32(self.f32_atol),
            F64: lambda: float(self.f64_atol),
            BF16: lambda: f32(self.bf16_atol),
        }.get(element_type, lambda: None)()


_SUCCESS = "[SUCCESS] all function outputs matched their expected values.\n"


def compare_expected(
    actual: Sequence[Value],
    expected_specs: Sequence[str],
    *,
    cconv: str | None = None,
    equality: Equality | None = None,
) -> tuple[bool, str]:
    """Checks results against `--expected_output` values; returns (ok, stdout text).

    The text is what iree-run-module prints: `[FAILED] ...` blocks for each mismatch, or the
    `[SUCCESS] ...` line. `cconv` is the function's result cconv; by default it is derived
    from the actual values. Badly formed expected values raise FunctionIOError.
    """
    actual = [_normalize(v) for v in numpy_scalars(list(actual))]
    equality = equality or Equality()
    if cconv is None:
        cconv = "".join(_cconv_of(v) for v in actual)
    try:
        expected = parse_inputs(expected_specs, cconv)
    except AmdgpuCliError as e:
        raise type(e)(f"{e}; parsing expected function outputs", status=e.status) from None
    if len(expected) != len(actual):
        return False, (
            f"[FAILED] expected {len(expected)} list elements but {len(actual)} provided\n"
        )
    lines = []
    ok = True
    for i, (e, a) in enumerate(zip(expected, actual)):
        failure = _compare_variants(i, e, a, equality)
        if failure:
            ok = False
            lines.append(failure)
    if ok:
        lines.append(_SUCCESS)
    return ok, "".join(lines)


def _cconv_of(value: Value) -> str:
    if _numpy_scalar(value):
        return {"i8": "i", "i16": "i", "i32": "i", "i64": "I", "f32": "f", "f64": "F"}[
            _scalar_name(value)
        ]
    return "r"


def _compare_variants(index: int, expected: Value, actual: Value, equality: Equality) -> str:
    if expected is None:
        return ""  # an expected (null)/(ignored) ref is a wildcard
    if isinstance(expected, Tensor) and isinstance(actual, Tensor):
        return _compare_buffer_views(index, expected, actual, equality)
    # IREE 3.13.0 inverts its same-type test for primitive values, so scalars always land
    # here, even when they are equal.
    return (
        f"[FAILED] result[{index}]: variant types mismatch; expected {_type_name(expected)} "
        f"but got {_type_name(actual)}\n"
    )


def _shape_and_type(tensor: Tensor) -> str:
    dims = "".join(f"{d}x" for d in tensor.shape)
    return f"{dims}{tensor.element_type.name}"


def _compare_buffer_views(index: int, expected: Tensor, actual: Tensor, equality: Equality) -> str:
    why = _match_buffer_view(expected, actual, equality)
    if why is None:
        return ""
    return (
        f"[FAILED] result[{index}]: {why}; expected that the view is equal to contents of a "
        f"view of {_shape_and_type(expected)}\n  expected:\n"
        f"{format_buffer_view(expected, DEFAULT_MAX_ELEMENT_COUNT)}\n  actual:\n"
        f"{format_buffer_view(actual, DEFAULT_MAX_ELEMENT_COUNT)}\n"
    )


def _match_buffer_view(expected: Tensor, actual: Tensor, equality: Equality) -> str | None:
    """None when equal, else IREE's description of the first difference."""
    import numpy as np

    if expected.shape != actual.shape or expected.element_type != actual.element_type:
        return (
            f"metadata is {_shape_and_type(actual)}; expected that the view matches "
            f"{_shape_and_type(expected)}"
        )
    element_type = actual.element_type
    e_flat = expected.storage.reshape(-1)
    a_flat = actual.storage.reshape(-1)
    atol = equality.atol_for(element_type) if equality.mode == "approximate" else None
    if atol is not None:
        e_values, a_values = _as_float64(e_flat, element_type), _as_float64(a_flat, element_type)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(a_values - e_values) <= atol + equality.rtol * np.abs(e_values)
            good = (a_values == e_values) | (np.isnan(a_values) & np.isnan(e_values)) | (
                np.isfinite(e_values) & close
            )
    else:
        size = element_type.byte_size
        e_bytes = np.frombuffer(e_flat.tobytes(), dtype=np.uint8).reshape(-1, size)
        a_bytes = np.frombuffer(a_flat.tobytes(), dtype=np.uint8).reshape(-1, size)
        good = np.all(e_bytes == a_bytes, axis=1)
    bad = np.flatnonzero(~good)
    if not bad.size:
        return None
    i = int(bad[0])
    formatter = _element_formatter(element_type)
    return (
        f"element at index {i} ({formatter(_flat_elements(actual), i, i + 1)[0]}) does not "
        f"match the expected ({formatter(_flat_elements(expected), i, i + 1)[0]})"
    )


def _as_float64(flat: np.ndarray, element_type: ElementType) -> np.ndarray:
    fmt = element_type.narrow_float
    if fmt is not None:
        from amdgpu_cli.tooling.narrow_float import decode_narrow_float

        return _widen(decode_narrow_float(_bits(flat), fmt))
    return _widen(flat)
