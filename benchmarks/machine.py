"""What the benchmarks ran on: CPU, cores, memory, OS and library versions.

A figure means nothing without its machine, so the report starts with this.
Every probe is best-effort: a missing file or tool gives "unknown", never an error.
"""
import os
import platform
import subprocess
from importlib import metadata

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def cpu_model():
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return platform.processor() or platform.machine() or "unknown"


def memory_gib():
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 2**20, 1)
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count()


def version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def blas():
    """numpy's BLAS, e.g. 'scipy-openblas 0.3.27' (numpy >= 1.25 can report it)."""
    try:
        import numpy
        info = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{info.get('name', '?')} {info.get('version', '')}".strip()
    except Exception:  # an old numpy or an unusual build: not worth failing for
        return "unknown"


def threads():
    """Worker threads each library may use (they all share the same cores)."""
    found = {}
    try:
        import numba
        found["numba"] = numba.config.NUMBA_NUM_THREADS
    except ImportError:
        pass
    try:
        import torch
        found["torch"] = torch.get_num_threads()
    except ImportError:
        pass
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        if var in os.environ:
            found[var] = os.environ[var]
    return found


def learntorch_commit():
    """The git commit benchmarked ('+dirty' when the tree has local changes)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=_ROOT,
                                capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=_ROOT, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return (commit + ("+dirty" if dirty.strip() else "")) or None


def load_average():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def describe():
    """The machine and software, as a JSON-friendly dict."""
    return {
        "cpu": cpu_model(),
        "logical_cores": os.cpu_count(),
        "usable_cores": usable_cores(),
        "memory_gib": memory_gib(),
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "learntorch": version("learntorch"),
        "learntorch_commit": learntorch_commit(),
        "numpy": version("numpy"),
        "numba": version("numba"),
        "torch": version("torch"),
        "blas": blas(),
        "threads": threads(),
        "load_average": load_average(),   # 1, 5, 15 min: is anyone else using the machine?
    }


if __name__ == "__main__":
    for key, value in describe().items():
        print(f"{key:>18}: {value}")
