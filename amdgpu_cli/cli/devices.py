"""`amdgpu dump-devices`: what the HSA runtime reports about every AMD GPU (and its host CPUs).

A thin command: create the amdgpu driver (libhsa search as `amdgpu-run`), read the agents, build
the document of `amdgpu_cli.drivers.amdgpu.dump.describe`, and print it as JSON
(`--format=json`, stable keys, see that module) or as text: styled with rich on a terminal, plain
otherwise (same words either way). Errors (no libhsa, hsa_init failing) are one line, exit 1.
"""

from __future__ import annotations

import click

_UNITS = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def format_bytes(count: int) -> str:
    """`68719476736` -> `64 GiB`; `1536` -> `1.5 KiB`; below 1 KiB: `512 B`."""
    for scale, unit in _UNITS:
        if count >= scale:
            value = count / scale
            return f"{value:.0f} {unit}" if count % scale == 0 else f"{value:.1f} {unit}"
    return f"{count} B"


def _pool_lines(pools: list[dict]) -> list[tuple[str, str | None]]:
    if not pools:
        return [("    (no memory pools)", None)]
    header = f"    {'flags':<28}{'segment':<10}{'size':>10}{'alloc max':>11}{'alignment':>11}" \
             f"{'granule':>10}  access"
    lines = [(header, "dim")]
    for pool in pools:
        flags = ",".join(pool["flags"]) or "-"
        sizes = [format_bytes(pool[k]) if pool["alloc_allowed"] else "-"
                 for k in ("alloc_max_size", "alignment", "granule")]
        access = ("all agents" if pool["accessible_by_all"] else "owner") + \
            ("" if pool["alloc_allowed"] else ", no runtime alloc")
        lines.append((f"    {flags:<28}{str(pool['segment']):<10}{format_bytes(pool['size']):>10}"
                      f"{sizes[0]:>11}{sizes[1]:>11}{sizes[2]:>10}  {access}", None))
    return lines


def text_lines(doc: dict) -> list[tuple[str, str | None]]:
    """(line, rich style or None) pairs of the text form."""
    gpus, cpus = doc["gpus"], doc["cpus"]
    lines: list[tuple[str, str | None]] = [
        (f"{len(gpus)} GPU agent{'s' * (len(gpus) != 1)}, {len(cpus)} CPU "
         f"agent{'s' * (len(cpus) != 1)} (HSA runtime {doc['library']})", "bold")]
    for gpu in gpus:
        host = gpu["host_cpu"]
        fields = [
            ("product", gpu["product_name"]), ("agent", f"{gpu['name']} ({gpu['vendor_name']})"),
            ("isa", ", ".join(gpu["isas"]) or "-"), ("uuid", gpu["uuid"]),
            ("node", str(gpu["node"])), ("chip id", f"0x{gpu['chip_id']:04x}"),
            ("compute units", str(gpu["compute_units"])),
            ("wavefront size", str(gpu["wavefront_size"])),
            ("host cpu", f"{host['name']} (node {host['node']})" if host else "-"),
            ("default device", "yes" if gpu["in_default_device"] else
             "no (differs from GPU 0; name it explicitly)"),
        ]
        lines += [("", None), (f"GPU {gpu['ordinal']}  {gpu['uri']}  ({gpu['ordinal_uri']})",
                               "bold cyan")]
        lines += [(f"  {key:<16}{value}", None) for key, value in fields]
        lines += [("  memory pools", None)] + _pool_lines(gpu["pools"])
    for cpu in cpus:
        lines += [("", None), (f"CPU {cpu['ordinal']}  {cpu['name']} ({cpu['vendor_name']}, node "
                               f"{cpu['node']})", "bold")]
        lines += [("  memory pools", None)] + _pool_lines(cpu["pools"])
    return lines


def _print_text(doc: dict) -> None:
    import sys

    lines = text_lines(doc)
    if not sys.stdout.isatty():
        sys.stdout.write("".join(line + "\n" for line, _ in lines))
        return
    from rich.text import Text

    from amdgpu_cli.cli.terminal import console

    for line, style in lines:
        console().print(Text(line, style=style or ""), overflow="ignore", crop=False)


@click.command("dump-devices", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--amdgpu_libhsa_search_path", "--amdgpu-libhsa-search-path", "search_paths",
              multiple=True, metavar="PATH",
              help="A libhsa-runtime64 file or directory to try first; repeatable.")
@click.option("--format", "format_", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Text for people, JSON for programs.")
def dump_devices(search_paths, format_) -> None:
    """Describe every AMD GPU agent HSA reports: URI, product, ISA, UUID, node, CUs, pools."""
    import json

    from amdgpu_cli.drivers.amdgpu import Driver
    from amdgpu_cli.drivers.amdgpu.dump import describe

    driver = Driver(libhsa_search_paths=search_paths)
    try:
        doc = describe(driver.agents(), driver.libhsa.file)
    finally:
        driver.close()
    if format_ == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        _print_text(doc)
