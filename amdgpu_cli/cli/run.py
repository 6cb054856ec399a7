"""`amdgpu run` / `amdgpu-run`: run one function of a .vmfb, as iree-run-module does.

Flags mirror iree-run-module's, in underscore and dashed spellings. The command builds RunOptions,
calls `amdgpu_cli.tooling.run.run` (which writes the `EXEC @fn` line and the results to stdout as
it goes) and exits with its exit code (1 when `--expected_output` did not match).
"""

from __future__ import annotations

import functools

import click


def _flag(name: str, *decls, **kwargs):
    dashed = name.replace("_", "-")
    spellings = [f"--{name}"] + ([f"--{dashed}"] if dashed != name else [])
    return click.option(*spellings, name, *decls, **kwargs)


def driver_options(amdgpu_libhsa_search_path=(), cuda_use_streams=None) -> dict:
    """The per-driver options the driver flags set (DriverRegistry.with_options)."""
    options: dict = {}
    if amdgpu_libhsa_search_path:
        options["amdgpu"] = {"libhsa_search_paths": list(amdgpu_libhsa_search_path)}
    if cuda_use_streams is not None:
        options["cuda"] = {"use_streams": cuda_use_streams}
    return options


def driver_flags(command):
    """IREE's driver flags the commands take (--amdgpu_libhsa_search_path,
    --cuda_use_streams); the command receives them as one `driver_options` dict."""
    flags = [
        _flag("amdgpu_libhsa_search_path", multiple=True, metavar="PATH",
              help="A libhsa-runtime64 file or directory for the amdgpu driver to try first; "
                   "repeatable."),
        _flag("cuda_use_streams", type=bool, default=None, is_flag=False, flag_value=True,
              metavar="[=BOOL]",
              help="cuda: true issues command buffers on the stream command by command; "
                   "false (the default) runs reusable ones as CUDA graphs."),
    ]

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        kwargs["driver_options"] = driver_options(kwargs.pop("amdgpu_libhsa_search_path"),
                                                  kwargs.pop("cuda_use_streams"))
        return command(*args, **kwargs)

    for flag in reversed(flags):
        wrapper = flag(wrapper)
    return wrapper


def module_flags(function_help: str):
    """--device, --module, --function and --input, shared by run and benchmark."""
    flags = [
        _flag("device", multiple=True, metavar="URI",
              help="A HAL device URI (local-sync, local-task, amdgpu, cuda...); repeat for several."),
        _flag("module", multiple=True, metavar="FILE",
              help="A .vmfb module; the last one is the main."),
        _flag("function", default="", metavar="NAME", help=function_help),
        _flag("input", multiple=True, metavar="VALUE",
              help="An argument: `2x2xf32=1 2 3 4`, `@file.npy`, `42`...; repeat in argument order."),
    ]

    def apply(command):
        for flag in reversed(flags):
            command = flag(command)
        return command
    return apply


def profiling_flags(command):
    """The --device_profiling_* flags and --print_device_statistics, shared by run and
    benchmark; the command receives them as one `profiling` argument (ProfilingFlags), and
    --print_statistics as `print_statistics`."""
    flags = [
        _flag("device_profiling_mode", default="", metavar="FAMILIES",
              help="Profile the device: comma-separated families (queue-events, host-execution, "
                   "memory-events, command-region-events, executable-metadata, dispatch-events, "
                   "device-queue-events, ...) or a preset name (profiles/presets)."),
        _flag("device_profiling_output", default="", metavar="FILE",
              help="The .ireeprof bundle to write (streamed as the run goes)."),
        _flag("device_profiling_filter_function", default="", metavar="GLOB",
              help="Capture heavy artifacts only for matching functions."),
        _flag("device_profiling_filter_command_buffer", type=int, default=-1, metavar="ID",
              help="... only for this command buffer id."),
        _flag("device_profiling_filter_command_index", type=int, default=-1, metavar="N",
              help="... only for this command index."),
        _flag("device_profiling_filter_physical_device", type=int, default=-1, metavar="N",
              help="... only on this physical device."),
        _flag("device_profiling_filter_queue", type=int, default=-1, metavar="N",
              help="... only on this queue."),
        _flag("device_profiling_counter", multiple=True, metavar="NAME",
              help="A hardware counter to sample (counters / counter-ranges); repeatable."),
        _flag("device_profiling_flush_interval_ms", type=int, default=0, metavar="MS",
              help="Flush the capture from a background thread every MS milliseconds."),
        _flag("print_device_statistics", is_flag=True,
              help="Profile into memory and print aggregate device statistics at the end."),
        _flag("print_statistics", type=bool, default=False, is_flag=False, flag_value=True,
              metavar="[=BOOL]", help="Print each device allocator's memory statistics at exit."),
    ]

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        from amdgpu_cli.tooling.capture_flags import ProfilingFlags

        kwargs["profiling"] = ProfilingFlags(
            mode=kwargs.pop("device_profiling_mode"),
            output=kwargs.pop("device_profiling_output"),
            filter_function=kwargs.pop("device_profiling_filter_function"),
            filter_command_buffer=kwargs.pop("device_profiling_filter_command_buffer"),
            filter_command_index=kwargs.pop("device_profiling_filter_command_index"),
            filter_physical_device=kwargs.pop("device_profiling_filter_physical_device"),
            filter_queue=kwargs.pop("device_profiling_filter_queue"),
            counters=tuple(kwargs.pop("device_profiling_counter")),
            flush_interval_ms=kwargs.pop("device_profiling_flush_interval_ms"),
            print_device_statistics=kwargs.pop("print_device_statistics"))
        kwargs["print_statistics"] = kwargs.pop("print_statistics")
        return command(*args, **kwargs)

    for flag in reversed(flags):
        wrapper = flag(wrapper)
    return wrapper


def parameter_flags(command):
    """--parameters and --parameter_mode (IREE's tooling/parameter_util.c), shared by run and
    benchmark; the command receives `parameters` (a list of `[scope=]path`) and
    `parameter_mode`."""
    flags = [
        _flag("parameters", multiple=True, metavar="[SCOPE=]FILE",
              help="A parameter file (.irpa, .gguf, .safetensors) for the anonymous scope "
                   "(`file.irpa`) or a named one (`model=file.irpa`); repeatable."),
        _flag("parameter_mode", default="file", show_default=True, metavar="MODE",
              help="preload: read whole parameter files into memory at start; file: read them "
                   "as needed."),
    ]

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        kwargs["parameters"] = list(kwargs.pop("parameters"))
        return command(*args, **kwargs)

    for flag in reversed(flags):
        wrapper = flag(wrapper)
    return wrapper


def replay_flags(command):
    """The --device_replay_* capture flags, shared by run and benchmark; the command receives
    them as one `replay` argument (tooling.capture_flags.ReplayFlags)."""
    flags = [
        _flag("device_replay_output", default="", metavar="FILE",
              help="Record every HAL call into this .ireereplay file (IREE's replay format, "
                   "streamed as the run goes)."),
        _flag("device_replay_file_policy", default="reference", metavar="POLICY",
              help="How fd-backed imported files are captured: reference, capture-ranges, "
                   "capture-all or fail (host-memory files are always stored inline)."),
        _flag("device_replay_file_validation", default="identity", metavar="MODE",
              help="How a replay validates referenced files: identity or digest."),
    ]

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        from amdgpu_cli.tooling.capture_flags import ReplayFlags

        kwargs["replay"] = ReplayFlags(
            output=kwargs.pop("device_replay_output"),
            file_policy=kwargs.pop("device_replay_file_policy"),
            file_validation=kwargs.pop("device_replay_file_validation"))
        return command(*args, **kwargs)

    for flag in reversed(flags):
        wrapper = flag(wrapper)
    return wrapper


@click.command("run", context_settings={"help_option_names": ["-h", "--help"]})
@module_flags("The function to run (default: the module's single exported function).")
@_flag("output", multiple=True, metavar="SPEC",
       help="Per result: empty (discard), `-` (print), `@file` / `+file` (.npy or raw bytes).")
@_flag("expected_output", multiple=True, metavar="VALUE",
       help="Expected result values (the --input grammar); prints [SUCCESS] or [FAILED].")
@_flag("output_max_element_count", type=int, default=1024, show_default=True,
       help="Elements printed per result before eliding.")
@_flag("equality_mode", type=click.Choice(["approximate", "exact"]), default="approximate",
       show_default=True, help="How --expected_output compares floats.")
@_flag("expected_f16_threshold", type=float, default=0.001, show_default=True)
@_flag("expected_f32_threshold", type=float, default=0.0001, show_default=True)
@_flag("expected_f64_threshold", type=float, default=0.0001, show_default=True)
@_flag("expected_bf16_threshold", type=float, default=0.01, show_default=True)
@_flag("expected_rtol", type=float, default=1e-5, show_default=True)
@_flag("list_drivers", is_flag=True, help="List the HAL drivers and exit.")
@_flag("list_devices", is_flag=False, flag_value="", default=None, metavar="[=DRIVER]",
       help="List the device URIs of every driver (or of DRIVER) and exit.")
@_flag("dump_devices", is_flag=False, flag_value="", default=None, metavar="[=DRIVER]",
       help="Describe every device of every driver (or of DRIVER) and exit.")
@driver_flags
@parameter_flags
@profiling_flags
@replay_flags
@_flag("device_replay_results", is_flag=True,
       help="With --device_replay_output=F: also keep the results read back, in F.results "
            "(for `amdgpu-replay run --verify`).")
def run(device, module, function, input, output, expected_output, output_max_element_count,
        equality_mode, expected_f16_threshold, expected_f32_threshold, expected_f64_threshold,
        expected_bf16_threshold, expected_rtol, list_drivers, list_devices, dump_devices,
        driver_options, parameters, parameter_mode, profiling, print_statistics,
        replay, device_replay_results) -> None:
    """Run a function of an IREE module (.vmfb) and print its results like iree-run-module."""
    import sys

    from amdgpu_cli.hal.registry import default_registry
    from amdgpu_cli.tooling import run as tool

    if list_drivers or list_devices is not None or dump_devices is not None:
        registry = default_registry().with_options(driver_options)
        text = (tool.list_drivers_text(registry) if list_drivers else
                tool.list_devices_text(registry, list_devices) if list_devices is not None else
                tool.dump_devices_text(registry, dump_devices))
        click.echo(text, nl=False)
        return
    if not module:
        raise click.UsageError("no --module= specified")
    equality = None  # the --expected_output checker is loaded only by runs that use it
    if expected_output:
        from amdgpu_cli.tooling.expected import Equality

        equality = Equality(equality_mode, expected_f16_threshold, expected_f32_threshold,
                            expected_f64_threshold, expected_bf16_threshold, expected_rtol)
    options = tool.RunOptions(
        modules=list(module), devices=list(device), function=function, inputs=list(input),
        outputs=list(output), expected_outputs=list(expected_output),
        output_max_element_count=output_max_element_count, equality=equality,
        driver_options=driver_options, profiling=profiling, print_statistics=print_statistics,
        replay=replay, parameters=parameters, parameter_mode=parameter_mode)
    replay.results = device_replay_results
    result = tool.run(options, sys.stdout)
    if result.exit_code:
        sys.exit(result.exit_code)
