"""softhsa: a software HSA runtime in C that the amdgpu driver's tests load instead of ROCr.

`tests.softhsa.build.build(directory)` compiles `src/*.c` into `directory/libhsa-runtime64.so`
(also `python -m tests.softhsa.build DIR`); point `hsa_ffi.load([directory])` or
`--amdgpu_libhsa_search_path` at the directory. Agents come from the JSON file named by
`SOFTHSA_CONFIG` (README.md has the schema and what is emulated how).
"""
