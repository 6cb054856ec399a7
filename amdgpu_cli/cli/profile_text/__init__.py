"""Text renderers for `amdgpu-profile` reports: each module's `render(rows, console)` turns a
report's JSONL rows into rich tables readable at 100 columns."""
