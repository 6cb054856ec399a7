"""amdgpu_cli: IREE's run, profile and replay tools for AMD GPUs, over an HSA-native driver."""

__version__ = "0.1.0"
__all__ = ["DeviceArray", "Module", "load_module"]


def __getattr__(name: str):
    # The Python API (numpy, the VM, the HAL) loads on first use, so `amdgpu-profile` and the
    # device commands start without it.
    if name in __all__:
        from amdgpu_cli import api
        return getattr(api, name)
    raise AttributeError(f"module 'amdgpu_cli' has no attribute {name!r}")
