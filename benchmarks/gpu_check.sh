#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: run the CUDA tests natively (no simulator) and the
# GPU benchmarks in one go, writing everything to one file.
#
#   benchmarks/gpu_check.sh [output-file]      (default: gpu_check.txt)
#
# Run from the repository root with the project's virtual environment (.venv) or
# PYTHON=/path/to/python.
set -uo pipefail
OUT="${1:-gpu_check.txt}"
PY="${PYTHON:-.venv/bin/python}"
export NUMBA_ENABLE_CUDASIM=0  # the real GPU, never the simulator
{
  echo "== gpu_check $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "no nvidia-smi"
  echo "== CUDA tests (native)"
  "$PY" -m pytest -q -p no:cacheprovider -n 0 tests/cuda 2>&1
  echo "tests exit status: $?"
  echo "== GPU benchmarks"
  "$PY" benchmarks/bench_gpu.py 2>&1
  echo "benchmarks exit status: $?"
} | tee "$OUT"
