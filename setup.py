"""Only here for cffi's build hook; all metadata lives in pyproject.toml.

Native helpers (cffi API mode, built by `pip install`): the .ireeprof record scanner and the CPU
driver's workgroup dispatcher.
"""

from setuptools import setup

setup(cffi_modules=["amdgpu_cli/profile/_scan_build.py:ffibuilder",
                    "amdgpu_cli/drivers/local/_dispatch_build.py:ffibuilder"])
