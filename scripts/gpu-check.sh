#!/usr/bin/env bash
# Builds phasor with the CUDA backend required and runs the CUDA tests on a machine with a GPU.
#
#   scripts/gpu-check.sh [extra doctest arguments]
#
# Environment: PHASOR_BUILD_DIR (default: build-gpu), PHASOR_JOBS (default: all cores),
# CMAKE_CUDA_ARCHITECTURES (default: the project's, 90).
# Fails when no GPU is visible: on such a machine the CUDA cases would only be skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${PHASOR_BUILD_DIR:-build-gpu}
jobs=${PHASOR_JOBS:-$(nproc)}
export PATH=$PATH:/usr/local/cuda/bin

echo "[gpu-check] devices"
nvidia-smi -L || { echo "[gpu-check] nvidia-smi failed: no GPU or driver" >&2; exit 1; }

arch=()
[[ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ]] && arch=(-DCMAKE_CUDA_ARCHITECTURES="$CMAKE_CUDA_ARCHITECTURES")
generator=()
[[ -f "$build_dir/CMakeCache.txt" ]] || generator=(-G Ninja)
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DPHASOR_CUDA=ON \
  -DPHASOR_BUILD_BENCH=OFF -DPHASOR_BUILD_EXAMPLES=OFF "${arch[@]}"
cmake --build "$build_dir" -j "$jobs" --target phasor_tests

echo "[gpu-check] CUDA tests"
# "cuda: without a GPU ..." cases are skipped here; every other cuda case must run and pass.
"$build_dir/tests/phasor_tests" --source-file='*test_cuda*.cpp' --success=false "$@"
echo "[gpu-check] whole suite"
"$build_dir/tests/phasor_tests" --no-intro
