#!/usr/bin/env bash
# Sets up everything the test suite needs on a bare Debian/Ubuntu machine, then runs it.
#
#   bash scripts/test.sh [pytest args...]
#
# 1. System packages (apt, through sudo when not root), installed only where missing:
#      gcc, python3-dev          the cffi native helpers (bundle scanner, CPU dispatch loop, softhsa)
#      libhsa-runtime-dev/64-1   the real ROCm 5.2 HSA headers (API-mode check) and library (no-GPU path)
#      clang-19, lld-19, llvm-19 build and inspect AMDGPU code objects (device library, test kernels)
#      python3-venv              only where python3 is the distribution's and lacks ensurepip
# 2. A virtual environment in .venv (made once, reused), holding the project and its test extra
#    (the IREE 3.13.0 oracles). A venv works the same on a system Python that refuses global
#    installs (PEP 668) and on one that does not.
# 3. The tests: python -m pytest -q, with .venv/bin first on PATH (the oracles and our commands).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(gcc python3-dev libhsa-runtime-dev libhsa-runtime64-1 clang-19 lld-19 llvm-19)
python3 -c 'import ensurepip' 2>/dev/null || APT_PACKAGES+=(python3-venv)
missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: missing system packages and no apt-get to install them: ${missing[*]}" >&2
    exit 1
  fi
  sudo=()
  if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi
  echo "installing system packages: ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'

export PATH="$PWD/.venv/bin:$PATH"
exec .venv/bin/python -m pytest -q "$@"
