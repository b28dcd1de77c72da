#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: run the CUDA tests natively (no simulator) and the
# GPU benchmarks in one go, writing everything to one file.
#
#   benchmarks/gpu_check.sh [output-file]      (default: gpu_check.txt)
#
# Run from the repository root with the project's virtual environment (.venv) or
# PYTHON=/path/to/python.  Exits non-zero when the tests or the benchmarks fail.
set -uo pipefail
OUT="${1:-gpu_check.txt}"
PY="${PYTHON:-.venv/bin/python}"
if [ ! -d learntorch ] || [ ! -d benchmarks ]; then
  echo "gpu_check.sh: run it from the repository root (cd to the folder holding learntorch/)" >&2
  exit 2
fi
export NUMBA_ENABLE_CUDASIM=0  # the real GPU, never the simulator
{
  echo "== gpu_check $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "no nvidia-smi"
  echo "== CUDA tests (native)"
  "$PY" -m pytest -q -p no:cacheprovider -n 0 tests/cuda 2>&1
  tests=$?
  echo "tests exit status: $tests"
  echo "== GPU benchmarks"
  # as a module: benchmarks/ is a package, and learntorch is found from the root even
  # when it is not installed into $PY's environment
  "$PY" -m benchmarks.bench_gpu 2>&1
  bench=$?
  echo "benchmarks exit status: $bench"
  [ "$tests" -eq 0 ] && [ "$bench" -eq 0 ]
} | tee "$OUT"
