"""GPU benchmarks: learntorch's CUDA kernels against PyTorch's, in one run on one GPU.

    python benchmarks/bench_gpu.py [--quick]

Each line times one operation on cuda tensors, synchronising before and after
so that the GPU's work is counted (kernel launches return at once), and
prints learntorch's time, PyTorch's time (when torch sees a GPU) and their
ratio.  matmul also reports GFLOP/s (2*M*N*K per product).  Needs a real GPU:
under Numba's simulator every number would measure Python threads.
"""
import argparse
import platform
import time

import numpy as np

import learntorch


def _timed(fn, sync, repeat):
    fn()  # compile / warm the caches first
    sync()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def _cases(lib, device, n):
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((n, n), dtype=np.float32), device=device)
    b = lib.tensor(rng.standard_normal((n, n), dtype=np.float32), device=device)
    v = lib.tensor(rng.standard_normal(n * n, dtype=np.float32), device=device)
    model = lib.nn.Sequential(lib.nn.Linear(784, 256), lib.nn.ReLU(),
                              lib.nn.Linear(256, 10)).to(device)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.tensor(rng.standard_normal((128, 784), dtype=np.float32), device=device)
    y = lib.tensor(rng.integers(0, 10, 128), device=device)

    def step():
        optimizer.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return {
        f"matmul {n}x{n} fp32": (lambda: a @ b, 2 * n ** 3),
        f"add {n * n} fp32": (lambda: v + v, None),
        f"exp {n * n} fp32": (lambda: v.exp(), None),
        f"sum rows {n}x{n}": (lambda: a.sum(1), None),
        f"softmax rows {n}x{n}": (lambda: lib.softmax(a, 1), None),
        "MLP 784-256-10 SGD step, batch 128": (step, None),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = parser.parse_args()
    n, repeat = (256, 3) if args.quick else (1024, 10)
    if not learntorch.cuda.is_available():
        raise SystemExit("no CUDA device: bench_gpu.py needs a GPU")
    try:
        import torch
        has_torch_gpu = torch.cuda.is_available()
    except ImportError:
        torch, has_torch_gpu = None, False
    print(f"machine: {platform.node()} {platform.machine()}, GPU: "
          f"{learntorch.cuda.get_device_name()}, torch GPU: {has_torch_gpu}")
    ours = _cases(learntorch, "cuda", n)
    theirs = _cases(torch, "cuda", n) if has_torch_gpu else {}
    print(f"{'operation':40s} {'learntorch ms':>14s} {'torch ms':>10s} {'ratio':>8s} "
          f"{'GFLOP/s (lt / torch)':>22s}")
    for name, (fn, flops) in ours.items():
        t_ours = _timed(fn, learntorch.cuda.synchronize, repeat)
        t_theirs = (_timed(theirs[name][0], torch.cuda.synchronize, repeat)
                    if name in theirs else float("nan"))
        rate = (f"{flops / t_ours / 1e9:8.1f} / {flops / t_theirs / 1e9:8.1f}"
                if flops else "")
        print(f"{name:40s} {t_ours * 1e3:14.3f} {t_theirs * 1e3:10.3f} "
              f"{t_ours / t_theirs:8.1f} {rate:>22s}")


if __name__ == "__main__":
    main()
