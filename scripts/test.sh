#!/usr/bin/env bash
# Builds phasor (library, tests, examples, benchmarks) and runs every test with ctest.
#
#   scripts/test.sh [extra ctest arguments, e.g. -R test_smoke]
#
# Environment:
#   PHASOR_BUILD_DIR   build directory, relative to the repository root or absolute (default: build)
#   PHASOR_BUILD_TYPE  CMAKE_BUILD_TYPE (default: Release)
#   PHASOR_CMAKE_ARGS  extra cmake configure arguments, split on spaces (e.g. "-DPHASOR_BUILD_BENCH=OFF")
#   PHASOR_JOBS        parallel compile jobs (default: 2)
#   PHASOR_CTEST_JOBS  tests run in parallel (default: 1)
#   PHASOR_SKIP_DEPS   set to 1 to skip scripts/deps.sh
# Safe to re-run: an existing build directory is reconfigured and built incrementally.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${PHASOR_BUILD_DIR:-build}
build_type=${PHASOR_BUILD_TYPE:-Release}
jobs=${PHASOR_JOBS:-2}
ctest_jobs=${PHASOR_CTEST_JOBS:-1}
read -r -a cmake_args <<< "${PHASOR_CMAKE_ARGS:-}"

if [[ "${PHASOR_SKIP_DEPS:-0}" != 1 ]]; then scripts/deps.sh; fi

# ccache (used automatically by CMakeLists.txt when installed) shares hits between clones of the repo.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}

generator=()
[[ -f "$build_dir/CMakeCache.txt" ]] || generator=(-G Ninja)  # keep whatever an existing tree uses
echo "[test] configure $build_dir ($build_type)"
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$build_type" "${cmake_args[@]}"
echo "[test] build ($jobs jobs)"
cmake --build "$build_dir" -j "$jobs"
echo "[test] ctest"
ctest --test-dir "$build_dir" --output-on-failure -j "$ctest_jobs" "$@"
