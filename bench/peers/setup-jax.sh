#!/usr/bin/env bash
# Installs the XLA peer that bench/peers and bench/fusion compare with, jax
# on its CPU backend (jax[cpu]: jax + jaxlib) and optax (its AdamW), into a
# venv of its own under the build directory: $MW_BUILD_DIR/jax-venv (default
# build/jax-venv; MW_JAX_VENV names another). Only those two benches use it;
# the build, the tests and CI never do, and it never touches the system
# Python. A venv of its own, not bench/zero's bench-venv: jax needs no torch,
# and the two keep their own numpy. Reused when present.
# Usage: bench/peers/setup-jax.sh [JAX_SPEC]   (default jax[cpu])
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv=${MW_JAX_VENV:-${MW_BUILD_DIR:-$root/build}/jax-venv}
spec=${1:-jax[cpu]}
t0=$SECONDS
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q "$spec" optax
"$venv/bin/python" -c "import jax, jaxlib, optax; print('bench/peers: jax', jax.__version__, 'jaxlib', jaxlib.__version__, 'optax', optax.__version__, 'in', '$venv')"
echo "bench/peers: $(du -sh "$venv" | cut -f1) installed in $((SECONDS - t0)) s"
