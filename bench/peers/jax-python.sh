#!/usr/bin/env bash
# Whether bench/peers and bench/fusion measure XLA, and with which Python:
# prints "measured PYTHON" where MW_JAX_VENV's interpreter (default
# BUILD_DIR/jax-venv, which bench/peers/setup-jax.sh makes), else FALLBACK
# (the benches' torch venv), imports jax; otherwise "skipped: WHY". ENABLED
# empty (the benches' --no-xla) skips.
# Usage: bench/peers/jax-python.sh BUILD_DIR FALLBACK ENABLED
set -uo pipefail
build_dir=${1:?BUILD_DIR}
if [ -z "${3:-}" ]; then
  echo "skipped: --no-xla"
  exit 0
fi
for p in "${MW_JAX_VENV:-$build_dir/jax-venv}/bin/python" "${2:-}"; do
  if [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import jax' 2>/dev/null; then
    echo "measured $p"
    exit 0
  fi
done
echo "skipped: jax is not installed (bench/peers/setup-jax.sh installs it into $build_dir/jax-venv)"
