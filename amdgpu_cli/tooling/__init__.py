"""Tool-level helpers shared by the amdgpu-* commands: function I/O (the `--input` grammar,
printing results, `--output` files, `--expected_output` checks) and element types.

Everything here works on host values (`Tensor`, numpy arrays and scalars); turning them into
device buffers is the VM/HAL's job. The `--expected_output` check (`Equality`,
`compare_expected`) loads on first use: a plain run does not need it.
"""

from amdgpu_cli.tooling.element_types import ElementType, ElementTypeError, NumericalType
from amdgpu_cli.tooling.io import (
    DEFAULT_MAX_ELEMENT_COUNT,
    InputFiles,
    format_result,
    format_results,
    parse_input,
    parse_inputs,
    write_output,
    write_outputs,
)
from amdgpu_cli.tooling.values import FunctionIOError, StorageBuffer, Tensor, Value

__all__ = [
    "DEFAULT_MAX_ELEMENT_COUNT",
    "ElementType",
    "ElementTypeError",
    "Equality",
    "FunctionIOError",
    "InputFiles",
    "NumericalType",
    "StorageBuffer",
    "Tensor",
    "Value",
    "compare_expected",
    "format_result",
    "format_results",
    "parse_input",
    "parse_inputs",
    "write_output",
    "write_outputs",
]

_LAZY = {"Equality", "compare_expected"}  # from amdgpu_cli.tooling.expected


def __getattr__(name: str):
    if name in _LAZY:
        from amdgpu_cli.tooling import expected

        return getattr(expected, name)
    raise AttributeError(f"module 'amdgpu_cli.tooling' has no attribute {name!r}")
