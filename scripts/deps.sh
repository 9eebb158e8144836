#!/usr/bin/env bash
# Installs, idempotently, every Debian package phasor's build, tests and benchmarks need.
# Usage: scripts/deps.sh [--bench]   (--bench adds PyTorch/NumPy for the comparison scripts)
set -euo pipefail
pkgs=(cmake ninja-build g++ ccache pkg-config doctest-dev libfftw3-dev libopenblas-openmp-dev
      libeigen3-dev libxtensor-dev libbenchmark-dev libomp-dev zlib1g-dev)
if [[ "${1:-}" == "--bench" ]]; then pkgs+=(python3-torch python3-numpy); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "[deps] installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "[deps] all packages present"
