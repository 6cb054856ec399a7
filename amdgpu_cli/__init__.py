"""amdgpu_cli: IREE's run, profile and replay tools for AMD GPUs, over an HSA-native driver."""

__version__ = "0.1.0"
from amdgpu_cli.api import load_module  # noqa: E402,F401
