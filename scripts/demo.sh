#!/usr/bin/env bash
# Builds and runs phasor's main example: examples/fit_function.cpp fits sin(3x) exp(-x^2) with a small
# tanh network trained through phasor's autodiff, prints its progress and the held-out error, and exits
# non-zero if the error is above the example's threshold.
#
#   scripts/demo.sh [arguments for the example, e.g. a step count]
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
cmake --build "$build_dir" -j "$jobs" --target fit_function
echo "[demo] running $build_dir/examples/fit_function $*"
exec "$build_dir/examples/fit_function" "$@"
