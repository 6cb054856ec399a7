"""cffi declarations of the HSA runtime API subset the amdgpu driver uses, and the library loader.

Planned contents (issue "HSA foundation"): the ABI-mode cdef pinned to the ROCm HSA headers it follows,
`load(search_paths)` that tries `--amdgpu_libhsa_search_path`, `IREE_HAL_AMDGPU_LIBHSA_PATH`, then
the system loader and reports every place it looked, and one `check(status, symbol)` for every call.
Nothing is declared yet; importing this package has no effect.
"""
