"""One module per `amdgpu-profile` command. Each exposes `report(bundle, options)`, which returns
(or yields) the command's JSONL rows, exactly as `iree-profile --format=jsonl` writes them, as
dicts (or read-only mappings) in IREE's key order; per-event rows come as `rows.RowBlock`s inside
a `jsonl.Rows`, which `jsonl.write_rows` renders natively. Several also expose
`report_file(path, options)`, a quicker way to the same rows (None where `report` must run).
Text rendering lives in `amdgpu_cli.cli.profile_text`."""
