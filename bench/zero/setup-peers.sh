#!/usr/bin/env bash
# Installs the peer bench/zero compares with, DeepSpeed (and the torch it
# needs), into a venv under the build directory: $MW_BUILD_DIR/bench-venv
# (default build/bench-venv). Only the benches use it; the build and the
# tests never do. DS_BUILD_OPS=0: DeepSpeed's Python estimators only, no
# CUDA extensions.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv=${MW_BUILD_DIR:-$root/build}/bench-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q torch
DS_BUILD_OPS=0 "$venv/bin/pip" install -q deepspeed
"$venv/bin/python" -c "import deepspeed; print('bench/zero: DeepSpeed', deepspeed.__version__, 'in', '$venv')"
