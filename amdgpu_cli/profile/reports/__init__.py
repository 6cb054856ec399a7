"""One module per `amdgpu-profile` command. Each exposes `report(bundle, options)`, which returns
(or yields) the command's JSONL rows, exactly as `iree-profile --format=jsonl` writes them, as
dicts (or read-only mappings) in IREE's key order; per-event rows come as `toolkit.RowBlock`s inside
a `toolkit.Rows`, which `jsonl.write_rows` renders natively. Text rendering lives in
`amdgpu_cli.cli.profile_text`."""
