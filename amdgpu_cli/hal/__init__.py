"""Driver-neutral HAL object model (see each module's docstring for its contract)."""

from amdgpu_cli.hal.allocator import Allocator, AllocatorStatistics, HostAllocator
from amdgpu_cli.hal.buffer import Buffer
from amdgpu_cli.hal.buffer_view import BufferView
from amdgpu_cli.hal.command_buffer import Binding, BufferRef, CommandBuffer, resolve_ref
from amdgpu_cli.hal.device import Device, HostQueueDevice
from amdgpu_cli.hal.driver import DeviceInfo, Driver
from amdgpu_cli.hal.enums import *  # noqa: F401,F403
from amdgpu_cli.hal.enums import HalError, StatusCode
from amdgpu_cli.hal.executable import Executable, ExecutableCache, ExportInfo
from amdgpu_cli.hal.fence import Fence, wait_fences
from amdgpu_cli.hal.registry import DeviceUri, DriverRegistry, default_registry, split_uri
from amdgpu_cli.hal.semaphore import Semaphore, wait_semaphores
