"""Text renderers for `amdgpu-profile` reports, readable at 100 columns: each module's
`render(rows, out)` writes a report's rows as plain lines to the text stream `out`; a module that
sets `RICH = True` draws through a rich Console instead (`render(rows, console)`), so only those
reports import rich."""
