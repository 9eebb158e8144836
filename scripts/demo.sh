#!/usr/bin/env bash
# Builds and runs phasor's main example: examples/fno_heat1d.cpp trains a Fourier neural operator on the
# solution operator of the 1-D heat equation (exact data from Gaussian random fields), shows progress,
# reports the relative L2 test error, writes fno_heat1d.png (truth vs prediction, loss curves) and a
# checkpoint in the current folder, and exits non-zero if the error is above the example's 2% threshold.
#
#   scripts/demo.sh [arguments for the example: epochs, PNG path]
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
cmake --build "$build_dir" -j "$jobs" --target fno_heat1d
echo "[demo] running $build_dir/examples/fno_heat1d $*"
exec "$build_dir/examples/fno_heat1d" "$@"
