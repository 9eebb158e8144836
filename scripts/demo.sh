#!/usr/bin/env bash
# Builds and runs phasor's main example: examples/fno_burgers1d.cpp, the Burgers benchmark of the FNO
# paper. It generates its data with phasor's own pseudo-spectral solver (Gaussian random initial
# conditions, viscous Burgers to t = 1 with ETDRK4), trains a Fourier neural operator on the map
# u(., 0) -> u(., 1), shows progress, reports the relative L2 test error, writes fno_burgers1d.png
# (solver vs prediction, loss curves) and a checkpoint in the current folder, and exits non-zero if
# the error is above the paper's 1.6%. The default (demo) configuration takes about 1-3 minutes on 2
# cores; `scripts/demo.sh --full` runs the paper's configuration (1000/200 samples at 1024, 500 epochs).
#
#   scripts/demo.sh [arguments for the example: --full, --epochs N, --png PATH]
#
# Environment: PHASOR_BUILD_DIR (default: build), PHASOR_CMAKE_ARGS, PHASOR_JOBS (default: 2),
#              PHASOR_SKIP_DEPS=1 to skip scripts/deps.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${PHASOR_BUILD_DIR:-build}
jobs=${PHASOR_JOBS:-2}
read -r -a cmake_args <<< "${PHASOR_CMAKE_ARGS:-}"

if [[ "${PHASOR_SKIP_DEPS:-0}" != 1 ]]; then scripts/deps.sh; fi
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}

generator=()
[[ -f "$build_dir/CMakeCache.txt" ]] || generator=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
cmake -S . -B "$build_dir" "${generator[@]}" -DPHASOR_BUILD_EXAMPLES=ON "${cmake_args[@]}"
cmake --build "$build_dir" -j "$jobs" --target fno_burgers1d
echo "[demo] running $build_dir/examples/fno_burgers1d $*"
exec "$build_dir/examples/fno_burgers1d" "$@"
