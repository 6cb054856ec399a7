"""The GPU agents softhsa's interpreter runs machine code for, as SOFTHSA_CONFIG `agents`
entries (gfx942: GFX9, 64-lane waves; gfx1100: GFX11, 32-lane waves)."""

AGENTS = {
    "gfx942": {"name": "gfx942", "isa": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
               "wavefront_size": 64, "compute_units": 304},
    "gfx1100": {"name": "gfx1100", "isa": "amdgcn-amd-amdhsa--gfx1100", "wavefront_size": 32,
                "compute_units": 48},
}
