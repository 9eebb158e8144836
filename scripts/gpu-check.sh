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
#                                       CUDA cases report as skipped),
#                                    2. the GPU benchmarks (bench_cuda) and PyTorch eager's side of
#                                       them (bench/fno_torch_cuda.py, when torch is installed),
#                                    3. when the suite failed, each GPU test file alone,
#                                    4. the CUDA cases under compute-sanitizer memcheck (caching
#                                       allocator off: exact bounds), then the reductions' under racecheck,
#                                    all within PHASOR_GPU_BUDGET seconds (540), and prints a short table
#                                    last. Logs go to $OUT (or build-gpu/out).
#   PHASOR_GPU_CHECK_BIN=DIR scripts/gpu-check.sh
#                                    a dry run of the same stages with the programs in DIR, e.g. those of
#                                    the CUDA emulation build (tests/cuda_emu): checks this script
#                                    without a GPU (the figures mean nothing there).
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
# The whole run keeps to PHASOR_GPU_BUDGET seconds (default 540: under the device tool's 600 s limit per
# command), so the table below is always printed; each stage gets its own cap or what is left, if less.
BUDGET=${PHASOR_GPU_BUDGET:-540}
T0=$SECONDS
cap() {  # cap SECONDS -> the stage's timeout, or 0 when under 10 s are left
  local left=$((BUDGET - (SECONDS - T0)))
  local t=$(($1 < left ? $1 : left))
  echo $((t < 10 ? 0 : t))
}
print_summary() {
  echo
  echo "== summary ($(date -u +%FT%TZ), $((SECONDS - T0)) s of $BUDGET)"
  printf '%s\n' "${summary[@]}"
  if [[ -f "$OUTDIR/torch_cuda.txt" ]]; then
    echo
    echo "== phasor vs PyTorch eager on this GPU"
    grep '^|' "$OUTDIR/torch_cuda.txt"
  fi
  if [[ -f "$OUTDIR/bench_cuda.txt" ]] && grep -q '^== GPU time per op' "$OUTDIR/bench_cuda.txt"; then
    echo  # BM_FNO2d_large_step_profile: where the large step's GPU time goes (phasor::profiler's table), the 14 largest
    grep -A 16 '^== GPU time per op' "$OUTDIR/bench_cuda.txt" | head -17
  fi
}

echo "== machine"
# machine.txt: the GPU, the library path, and the SASS of a few hot kernels (stage 2b); one file, as the
# device tool returns at most 8 files from $OUT
MACHINE=$OUTDIR/machine.txt
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$MACHINE"
command -v nvcc > /dev/null && nvcc --version | tail -1

# cuBLAS/cuFFT are dlopen()ed: the toolkit's folders first, then those of the CUDA wheels beside PyTorch
ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}  # PyTorch runs with the machine's own libraries, not the bundle's
CUDA_LIBS=/usr/local/cuda/lib64:/usr/local/cuda/lib
if command -v python3 > /dev/null; then
  wheel_libs=$(timeout 20 python3 -c 'import glob, os, site
dirs = [d for p in site.getsitepackages() for d in glob.glob(os.path.join(p, "nvidia", "**", "lib"), recursive=True)
        if glob.glob(os.path.join(d, "libcublas.so*")) or glob.glob(os.path.join(d, "libcufft.so*"))]
print(":".join(sorted(set(dirs))))' 2> /dev/null)
  [[ -n "$wheel_libs" ]] && CUDA_LIBS="$CUDA_LIBS:$wheel_libs"
fi

if [[ -n "${PHASOR_GPU_CHECK_BIN:-}" ]]; then
  BIN=$PHASOR_GPU_CHECK_BIN
  row "setup" "programs from $BIN (dry run)"
elif [[ -f "$BUNDLE" ]]; then
  RUN=/tmp/phasor-gpu && rm -rf "$RUN" && mkdir -p "$RUN" && tar -C "$RUN" -xJf "$BUNDLE"
  export LD_LIBRARY_PATH="$RUN/lib:$CUDA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  BIN=$RUN/bin
  row "setup" "bundle unpacked"
else
  echo "== no bundle: building here"
  export LD_LIBRARY_PATH="$CUDA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # one log for both steps: the device tool returns at most 8 files from $OUT
  if cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPHASOR_CUDA=ON -DPHASOR_BUILD_BENCH=ON \
       -DPHASOR_BUILD_EXAMPLES=OFF > "$OUTDIR/build.log" 2>&1 &&
     timeout "$(cap 300)" ninja -C build-gpu -j"$(nproc)" >> "$OUTDIR/build.log" 2>&1; then
    BIN=$ROOT/build-gpu/bin && mkdir -p "$BIN"
    cp build-gpu/tests/phasor_tests build-gpu/bench/bench_* "$BIN/" 2>/dev/null
    row "setup" "built here"
  else
    tail -20 "$OUTDIR"/build.log 2>/dev/null
    row "setup" "FAILED (no bundle, and the build here failed: see build.log)"
    print_summary
    exit 1
  fi
fi
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >> "$MACHINE"
export PHASOR_TEST_DATA_DIR="$ROOT/tests/data"

# runs a stage under its capped timeout: stage NAME CAP LOG COMMAND...; sets rc (124: cut by the budget)
stage() {
  local name=$1 t
  t=$(cap "$2")
  local log=$3
  shift 3
  if ((t == 0)); then
    rc=skipped
    row "$name" "skipped: the budget is spent"
    return 1
  fi
  timeout "$t" "$@" > "$log" 2>&1
  rc=$?
  return 0
}

echo "== 1. test suite (CPU + CUDA)"
if stage "tests (all)" 240 "$OUTDIR/tests.log" "$BIN/phasor_tests"; then
  tail -4 "$OUTDIR/tests.log"
  row "tests (all)" "$(grep -E '^\[doctest\] test cases' "$OUTDIR/tests.log" | sed 's/\[doctest\] //') rc=$rc"
  suite_rc=$rc
fi

echo "== 2. GPU benchmarks (bench_cuda, then PyTorch eager on the same work; table in torch_cuda.txt)"
shopt -s nullglob
for b in "$BIN"/bench_*cuda*; do
  name=$(basename "$b")
  if stage "$name" 200 "$OUTDIR/$name.txt" "$b" --benchmark_min_time=0.05 --benchmark_repetitions=3 \
       --benchmark_report_aggregates_only=true --benchmark_format=console --benchmark_out="$OUTDIR/$name.json" \
       --benchmark_out_format=json; then
    row "$name" "rc=$rc ($(grep -c median "$OUTDIR/$name.txt") medians, $name.txt)"
    grep median "$OUTDIR/$name.txt" | head -40
  fi
done
torch_err=$(LD_LIBRARY_PATH=$ORIG_LD_LIBRARY_PATH python3 -c "import torch" 2>&1 | tail -1)
if [[ -f "$OUTDIR/bench_cuda.json" && -z "$torch_err" ]]; then
  # unbuffered: a run cut by its cap still leaves what it printed
  if stage "fno_torch_cuda.py (torch side + table)" 150 "$OUTDIR/torch_cuda.txt" \
       env LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" python3 -u "$ROOT/bench/fno_torch_cuda.py" --phasor "$OUTDIR/bench_cuda.json"; then
    row "fno_torch_cuda.py (torch side + table)" "rc=$rc"
    cat "$OUTDIR/torch_cuda.txt"
  fi
else
  row "fno_torch_cuda.py" "skipped (bench_cuda.json: $([[ -f "$OUTDIR/bench_cuda.json" ]] && echo yes || echo no); import torch: ${torch_err:-ok})"
fi

# the machine code of the kernels the blind changes of bench/README.md's predictions were about: are the
# loads of a thread's stride_fold group issued before their uses (Note [loads in flight]), is spectral_mix's
# register tile in registers (no local memory)
echo "== 2b. SASS of hot kernels (cuobjdump, into machine.txt)"
lib=
for f in "$BIN"/../lib/libphasor.so* "$ROOT"/build-gpu/libphasor.so*; do [[ -f "$f" && -z "$lib" ]] && lib=$f; done
if command -v cuobjdump > /dev/null && [[ -n "$lib" ]] && (($(cap 60) > 0)); then
  sass=$(mktemp)
  timeout "$(cap 60)" cuobjdump --dump-sass "$lib" > "$sass" 2> /dev/null
  for k in rows_kernelIfNS1_3SumIfEEfEE flat_kernelILi2EffNS1_3AddE strided_kernelILi2EfNS1_3AddE mix_kernelIfEE; do
    awk -v k="$k" '/Function : /{p = index($0, k) > 0} p' "$sass" > "$sass.k"
    row "  SASS $k" "$(grep -c 'LDG' "$sass.k") LDG, $(grep -c 'STG' "$sass.k") STG, $(grep -cE 'LDL|STL' "$sass.k") local"
    { echo "== SASS $k"; cat "$sass.k"; } >> "$MACHINE"
  done
  rm -f "$sass" "$sass.k"
else
  row "SASS" "skipped (cuobjdump: $(command -v cuobjdump > /dev/null && echo yes || echo no), library: ${lib:-none})"
fi

# each GPU test file once more in a process of its own when the whole suite failed: a crash or a sticky
# CUDA error in one file cannot hide the results of the others (the [cpu:1] halves ran in the suite above)
# (their logs go into one archive: the device tool returns few files, and bench_cuda.json must be one)
if [[ "${suite_rc:-1}" != 0 ]]; then
  echo "== 3. the GPU test files one by one (the whole suite failed)"
  FILES=$(mktemp -d)
  for src in "$ROOT"/tests/test_cuda*.cpp; do
    f=$(basename "$src" .cpp)
    if stage "  $f" 120 "$FILES/$f.log" "$BIN/phasor_tests" --source-file="*$f.cpp" -tce='*[cpu:1]'; then
      row "  $f" "$(grep -E '^\[doctest\] test cases' "$FILES/$f.log" | sed 's/\[doctest\] //') rc=$rc"
      grep -E 'ERROR|error' "$FILES/$f.log" | head -5
    fi
  done
  tar -C "$FILES" -czf "$OUTDIR/test_cuda_files.tar.gz" . && rm -rf "$FILES"
fi

echo "== 4. compute-sanitizer memcheck on the CUDA cases (last: it is the slowest stage)"
if command -v compute-sanitizer > /dev/null; then
  # Without the caching allocator (PHASOR_NO_CUDA_MEMORY_CACHING=1: a cudaMalloc of exact size per tensor),
  # so that an access past a tensor's end is outside every allocation, not inside a cached 2 MiB segment.
  # No --leak-check: the allocator's pools and per-device constants live until the process ends, by design.
  if stage "memcheck (cuda cases)" 240 "$OUTDIR/memcheck.log" env PHASOR_NO_CUDA_MEMORY_CACHING=1 \
       compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/phasor_tests" -tc='*cuda*,*CUDA*' -tce='*[cpu:1]'; then
    tail -3 "$OUTDIR/memcheck.log"
    row "memcheck (cuda cases)" "$(grep -E 'ERROR SUMMARY' "$OUTDIR/memcheck.log" | tail -1) rc=$rc"
  fi
  # the kernels that share memory across a block's threads (reduction trees, scans, arg-extrema), for
  # races, with what budget is left
  if stage "racecheck (reductions)" 90 "$OUTDIR/memcheck.log.race" compute-sanitizer --tool racecheck \
       --error-exitcode 9 "$BIN/phasor_tests" -sf='*test_cuda_reduce.cpp' -tce='*[cpu:1]'; then
    row "racecheck (reductions)" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/memcheck.log.race" | tail -1) rc=$rc"
    # one file for both logs: the device tool returns at most 8 files
    { echo "== racecheck"; cat "$OUTDIR/memcheck.log.race"; } >> "$OUTDIR/memcheck.log" && rm -f "$OUTDIR/memcheck.log.race"
  fi
else
  row "memcheck" "compute-sanitizer not found"
fi

print_summary
