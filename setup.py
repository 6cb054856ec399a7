"""Only here for cffi's build hook; all metadata lives in pyproject.toml."""

from setuptools import setup

setup(cffi_modules=["amdgpu_cli/profile/_scan_build.py:ffibuilder"])
