"""One module per `amdgpu-profile` command. Each exposes `report(bundle, options)`, which returns
(or yields) the command's JSONL rows, exactly as `iree-profile --format=jsonl` writes them, as
dicts in IREE's key order. Text rendering lives in `amdgpu_cli.cli.profile_text`."""
