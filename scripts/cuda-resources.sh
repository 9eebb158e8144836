#!/usr/bin/env bash
# scripts/cuda-resources.sh - what ptxas reports for every CUDA kernel, without a GPU: registers, stack
# frame and spills per kernel for sm_90 (the build's target), from `nvcc -cubin -Xptxas -v` on each
# src/cuda/*.cu file.
#
#   scripts/cuda-resources.sh                 a line per file: kernels, most registers, kernels with a
#                                             stack frame, kernels that spill (exit 1 if any spills)
#   scripts/cuda-resources.sh PATTERN...      also each kernel whose demangled name contains a PATTERN
#                                             (e.g. 'rows_kernel<float, Sum' 'mix_kernel')
#
# Environment: NVCC (default nvcc on PATH, else /usr/local/cuda/bin/nvcc), PHASOR_CUDA_RESOURCES_DIR (where
# the cubins and ptxas logs go; default build-resources/). Each file compiles in 5-60 s.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[[ -x "$nvcc" ]] || { echo "cuda-resources: nvcc not found (set NVCC)" >&2; exit 2; }
out=${PHASOR_CUDA_RESOURCES_DIR:-build-resources}
mkdir -p "$out"

spilled=0
printf '%-18s %8s %10s %12s %8s\n' file kernels max_regs stack_frames spills
for cu in src/cuda/*.cu; do
  name=$(basename "$cu" .cu)
  log="$out/$name.ptxas.txt"
  "$nvcc" -DNDEBUG -DPHASOR_WITH_CUDA=1 -Iinclude -Isrc -O3 -std=c++17 \
    --generate-code=arch=compute_90,code=sm_90 -Xptxas -v -cubin -x cu "$cu" -o "$out/$name.cubin" > "$log" 2>&1 ||
    { cat "$log" >&2; exit 2; }
  # ptxas prints, per kernel: "Compiling entry function '<mangled>'", then its stack/spill line and
  # its "Used N registers" line
  python3 - "$log" "$name" "$@" <<'PY' || spilled=1
import re, subprocess, sys
log, name, patterns = sys.argv[1], sys.argv[2], sys.argv[3:]
kernels, cur, prop = {}, None, None
for line in open(log):
    m = re.search(r"Compiling entry function '(\S+)'", line)
    if m:
        cur = m.group(1)
        kernels[cur] = {"regs": 0, "stack": 0, "spill": 0}
        continue
    m = re.search(r"Function properties for (\S+)", line)
    if m:
        prop = m.group(1)  # a kernel, or a device function it calls (the math library's slow paths)
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and prop in kernels:
        kernels[prop]["stack"] = int(m.group(1))
        kernels[prop]["spill"] = int(m.group(2)) + int(m.group(3))
    if cur is None:
        continue
    m = re.search(r"Used (\d+) registers", line)
    if m:
        kernels[cur]["regs"] = int(m.group(1))
names = dict(zip(kernels, subprocess.run(["c++filt"], input="\n".join(kernels), capture_output=True,
                                         text=True).stdout.split("\n")))
short = {k: names.get(k, k).replace("(anonymous namespace)::", "").replace("phasor::cuda::", "")
         .replace("cuda::std::__4::", "") for k in kernels}
stack = sum(1 for v in kernels.values() if v["stack"] > 0)
spills = [k for k, v in kernels.items() if v["spill"] > 0]
print(f"{name:18s} {len(kernels):8d} {max((v['regs'] for v in kernels.values()), default=0):10d} {stack:12d} {len(spills):8d}")
for k in spills:
    print(f"  spills {kernels[k]['spill']} bytes: {short[k][:160]}")
for k, v in kernels.items():
    if any(p in short[k] for p in patterns):
        print(f"  {v['regs']:4d} registers, stack {v['stack']:3d}: {short[k][:160]}")
sys.exit(1 if spills else 0)
PY
done
[[ $spilled -eq 0 ]] || { echo "cuda-resources: some kernels spill registers to local memory" >&2; exit 1; }
