"""Example MLIR models and helpers to compile them with iree-compile."""
