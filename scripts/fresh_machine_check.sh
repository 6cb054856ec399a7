#!/usr/bin/env bash
# Runs the README's two commands (quickstart, then tests), one after the other, on a fresh clone
# of this repository's HEAD inside a fresh Debian 12 chroot: what a new machine sees, none of the
# test suite's apt packages installed. Prints each command's exit status and wall time.
#
#   sudo bash scripts/fresh_machine_check.sh [WORKDIR]     (WORKDIR default: /var/tmp/amdgpu-fresh)
#
# Needs root and debootstrap. WORKDIR/base is made once (debootstrap --variant=minbase with what a
# new machine of this kind has: python3 with pip and venv, gcc, the Python headers, git,
# ca-certificates) and copied to WORKDIR/root for every check. Extra CA certificates of the host
# (a TLS-intercepting proxy) are passed to pip as PIP_CERT: network set-up, not the project's.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "error: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "error: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/var/tmp/amdgpu-fresh}
base=$work/base
root=$work/root

unmount() {
  for m in proc sys; do mountpoint -q "$root/$m" && umount "$root/$m"; done
  if mountpoint -q "$root/dev"; then umount -R "$root/dev"; fi
  return 0
}
trap unmount EXIT

if [ ! -x "$base/usr/bin/python3" ]; then
  debootstrap --variant=minbase \
    --include=python3,python3-pip,python3-venv,python3-dev,gcc,libc6-dev,git,ca-certificates \
    bookworm "$base" http://deb.debian.org/debian
fi
unmount
# Never delete through a mount (a bound /dev would be the host's).
if grep -q " $root/" /proc/mounts; then echo "error: mounts remain under $root" >&2; exit 1; fi
rm -rf --one-file-system "$root"
cp -a "$base" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$root/root/host-ca.crt"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --rbind /dev "$root/dev"
git clone -q "$repo" "$root/root/repo"
git -C "$root/root/repo" log --oneline -1

# The README's sh blocks: the first is the quickstart, the second the test command.
mapfile -t commands < <(awk '/^```sh$/{f=1;next}/^```$/{f=0}f' "$repo/README.md")
for i in 0 1; do
  echo "\$ ${commands[$i]}"
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PIP_CERT=/root/host-ca.crt \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /root/repo && start=\$(date +%s) && { ${commands[$i]}; }; rc=\$?; echo \"README command $((i + 1)): exit \$rc, \$((\$(date +%s) - start)) s\"; exit \$rc"
done
