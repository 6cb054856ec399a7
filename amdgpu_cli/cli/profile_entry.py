"""`python -m amdgpu_cli.cli.profile_entry ...` is `amdgpu-profile ...` (used where no script is on PATH)."""

from amdgpu_cli.cli.main import profile_main

if __name__ == "__main__":
    profile_main()
