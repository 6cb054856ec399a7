"""Pure parsers of IREE's file formats; nothing here touches a device.

`flatbuffer`  generic FlatBuffer table reader (bounds-checked, raises a format error)
`vmfb`        .vmfb container and bytecode module metadata: `load_vmfb(path_or_bytes)`
"""
