#!/usr/bin/env bash
# scripts/gpu-check.sh - the one GPU check of phasor (issue #6), sized for a lent H200 (about 8 minutes).
#
#   scripts/gpu-check.sh --prepare   here (no GPU needed): builds build-gpu/ with the CUDA backend
#                                    (sm_90 + PTX), and packs the library, the test and benchmark
#                                    programs and the shared libraries they need that a CUDA machine
#                                    may lack (FFTW, OpenBLAS, Google Benchmark, ...) into
#                                    build-gpu/gpu-bundle.tar.xz (~15 MB).
#   scripts/gpu-check.sh             on the GPU machine: unpacks the bundle (or, without one, builds
#                                    in place when CMake and the dependencies are there), then runs
#                                    1. the whole test suite (CPU and CUDA cases; without a GPU the
#                                       CUDA cases report as skipped), then each GPU test file alone,
#                                    2. the CUDA cases under compute-sanitizer memcheck,
#                                    3. the GPU benchmarks (bench_cuda) and PyTorch eager's side of
#                                       them (bench/fno_torch_cuda.py, when torch is installed),
#                                    and prints a short table last. Logs go to $OUT (or build-gpu/out).
#
# With the device tool:  run(command="scripts/gpu-check.sh", carry=["build-gpu/gpu-bundle.tar.xz"])
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUNDLE=build-gpu/gpu-bundle.tar.xz

if [[ "${1:-}" == "--prepare" ]]; then
  set -e
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPHASOR_CUDA=ON \
    -DPHASOR_BUILD_TESTS=ON -DPHASOR_BUILD_BENCH=ON -DPHASOR_BUILD_EXAMPLES=OFF
  ninja -C build-gpu -j"$(nproc)"
  stage=build-gpu/stage
  rm -rf "$stage" && mkdir -p "$stage/lib" "$stage/bin"
  cp -L build-gpu/libphasor.so.0 "$stage/lib/"
  cp build-gpu/tests/phasor_tests "$stage/bin/"
  for b in build-gpu/bench/bench_*; do [[ -x "$b" && -f "$b" ]] && cp "$b" "$stage/bin/"; done
  # shared libraries outside glibc/libstdc++ and the CUDA toolkit (the GPU machine has its own CUDA)
  for f in "$stage"/bin/* "$stage"/lib/*; do
    ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
  done | sort -u | grep -Ev '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|/usr/local/cuda|libcuda\.so|libphasor' |
    while read -r lib; do cp -L "$lib" "$stage/lib/"; done
  strip --strip-unneeded "$stage"/bin/* "$stage"/lib/* 2>/dev/null || true
  tar -C "$stage" -cJf "$BUNDLE" .
  ls -la "$BUNDLE"
  exit 0
fi

OUTDIR=${OUT:-$ROOT/build-gpu/out}
mkdir -p "$OUTDIR"
summary=()
row() { summary+=("$(printf '%-44s %s' "$1" "$2")"); }

echo "== machine"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$OUTDIR/nvidia-smi.txt"
command -v nvcc > /dev/null && nvcc --version | tail -1

if [[ -f "$BUNDLE" ]]; then
  RUN=/tmp/phasor-gpu && rm -rf "$RUN" && mkdir -p "$RUN" && tar -C "$RUN" -xJf "$BUNDLE"
  export LD_LIBRARY_PATH="$RUN/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"  # cuBLAS/cuFFT are dlopen()ed
  BIN=$RUN/bin
  row "setup" "bundle unpacked"
else
  echo "== no bundle: building here"
  if cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPHASOR_CUDA=ON -DPHASOR_BUILD_BENCH=ON \
       -DPHASOR_BUILD_EXAMPLES=OFF > "$OUTDIR/configure.log" 2>&1 &&
     timeout 300 ninja -C build-gpu -j"$(nproc)" > "$OUTDIR/build.log" 2>&1; then
    BIN=$ROOT/build-gpu/bin && mkdir -p "$BIN"
    cp build-gpu/tests/phasor_tests build-gpu/bench/bench_* "$BIN/" 2>/dev/null
    row "setup" "built here"
  else
    tail -20 "$OUTDIR"/configure.log "$OUTDIR"/build.log 2>/dev/null
    row "setup" "FAILED (no bundle, and the build here failed: see configure.log/build.log)"
    printf '%s\n' "${summary[@]}"
    exit 1
  fi
fi
export PHASOR_TEST_DATA_DIR="$ROOT/tests/data"

echo "== 1. test suite (CPU + CUDA)"
timeout 240 "$BIN/phasor_tests" > "$OUTDIR/tests.log" 2>&1
rc=$?
tail -4 "$OUTDIR/tests.log"
row "tests (all)" "$(grep -E '^\[doctest\] test cases' "$OUTDIR/tests.log" | sed 's/\[doctest\] //') rc=$rc"
# each GPU test file once more in a process of its own: a crash or a sticky CUDA error in one file
# cannot hide the results of the others (the [cpu:1] halves ran in the whole suite above)
for src in "$ROOT"/tests/test_cuda*.cpp; do
  f=$(basename "$src" .cpp)
  timeout 120 "$BIN/phasor_tests" --source-file="*$f.cpp" -tce='*[cpu:1]' > "$OUTDIR/$f.log" 2>&1
  frc=$?
  row "  $f" "$(grep -E '^\[doctest\] test cases' "$OUTDIR/$f.log" | sed 's/\[doctest\] //') rc=$frc"
done

echo "== 2. compute-sanitizer memcheck on the CUDA cases"
if command -v compute-sanitizer > /dev/null; then
  timeout 180 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    "$BIN/phasor_tests" -tc='*cuda*,*CUDA*' -tce='*[cpu:1]' > "$OUTDIR/memcheck.log" 2>&1
  mrc=$?
  tail -3 "$OUTDIR/memcheck.log"
  row "memcheck (cuda cases)" "$(grep -E 'ERROR SUMMARY' "$OUTDIR/memcheck.log" | tail -1) rc=$mrc"
else
  row "memcheck" "compute-sanitizer not found"
fi

echo "== 3. GPU benchmarks (bench_cuda, then PyTorch eager on the same work; table in torch_cuda.txt)"
shopt -s nullglob
for b in "$BIN"/bench_*cuda*; do
  name=$(basename "$b")
  timeout 200 "$b" --benchmark_min_time=0.05 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_format=console --benchmark_out="$OUTDIR/$name.json" --benchmark_out_format=json > "$OUTDIR/$name.txt" 2>&1
  row "$name" "rc=$? ($(grep -c median "$OUTDIR/$name.txt") medians, $name.txt)"
  grep median "$OUTDIR/$name.txt" | head -40
done
if [[ -f "$OUTDIR/bench_cuda.json" ]] && python3 -c "import torch" 2> /dev/null; then
  timeout 150 python3 "$ROOT/bench/fno_torch_cuda.py" --phasor "$OUTDIR/bench_cuda.json" > "$OUTDIR/torch_cuda.txt" 2>&1
  row "fno_torch_cuda.py (torch side + table)" "rc=$?"
  cat "$OUTDIR/torch_cuda.txt"
else
  row "fno_torch_cuda.py" "skipped (no bench_cuda.json or no torch)"
fi

echo
echo "== summary ($(date -u +%FT%TZ))"
printf '%s\n' "${summary[@]}"
if [[ -f "$OUTDIR/torch_cuda.txt" ]]; then
  echo
  echo "== phasor vs PyTorch eager on this GPU"
  grep '^|' "$OUTDIR/torch_cuda.txt"
fi
