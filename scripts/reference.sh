#!/usr/bin/env bash
# The reference, tiny-harness 0.9.0, for `baton-bench a2a --reference scripts/reference.sh`.
#
#   sudo bash scripts/reference.sh --install   # once: a Debian sid root with Python 3.14
#   scripts/reference.sh ARGS...               # tiny-harness ARGS..., run in that root
#
# tiny-harness needs Python 3.14, which Debian 12 does not ship. --install builds a minimal
# Debian sid root (debootstrap, from deb.debian.org) with python3.14 under $BATON_REFERENCE_ROOT
# (default /opt/baton-reference), and installs tiny-harness==0.9.0 from PyPI into a venv there.
# Every run binds /proc, /dev and /tmp into the root, so the CLI finds the config the bench
# writes under /tmp and serves on the same 127.0.0.1. Both need root (chroot, mount).
set -euo pipefail
root="${BATON_REFERENCE_ROOT:-/opt/baton-reference}"
venv=/opt/tiny-harness

bind_host_dirs() {
  mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
  for dir in dev tmp; do
    mountpoint -q "$root/$dir" || mount --bind "/$dir" "$root/$dir"
  done
}

if [ "${1:-}" = "--install" ]; then
  if ! command -v debootstrap >/dev/null; then
    apt-get update -qq && apt-get install -y -qq debootstrap
  fi
  if [ ! -x "$root/usr/bin/python3.14" ]; then
    debootstrap --variant=minbase --include=python3.14,python3.14-venv,ca-certificates \
      sid "$root" http://deb.debian.org/debian
  fi
  # The host's resolver and certificates: a registry mirror may have its own CA.
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/host-ca-certificates.crt"
  bind_host_dirs
  chroot "$root" /usr/bin/python3.14 -m venv "$venv"
  local_ca=/etc/ssl/certs/host-ca-certificates.crt
  chroot "$root" /usr/bin/env PIP_CERT="$local_ca" SSL_CERT_FILE="$local_ca" PIP_FIND_LINKS= \
    "$venv/bin/pip" install --quiet tiny-harness==0.9.0
  chroot "$root" "$venv/bin/tiny-harness" --version
  exit 0
fi

if [ ! -x "$root$venv/bin/tiny-harness" ]; then
  echo "error: no tiny-harness under $root; run: sudo bash $0 --install" >&2
  exit 1
fi
bind_host_dirs
# exec keeps the pid: the bench reads the CPU and RSS of the process it started.
exec chroot "$root" "$venv/bin/tiny-harness" "$@"
