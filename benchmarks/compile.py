"""python -m benchmarks.compile [--repeats N] [--quick] [--markdown]: learntorch.compile's figures.

Four contenders run the same function in this one process, taking turns (pair mode:
one measurement of each per round, so all see the same machine at the same moment):
eager learntorch, ``learntorch.compile``, eager PyTorch and ``torch.compile`` (Inductor,
which writes C++ on a CPU and needs a C++ compiler; without one its column is "—").
Each figure is the median of ``repeats`` measurements, with the spread (min-max); a
ratio is taken within each round and the median of those is reported.

* **An 8-op elementwise chain on 1e6 float32** (mul, add, relu, mul, sub, clamp, add,
  mul).  Eager runs 8 passes over memory; the compiled one is one kernel reading x once
  and writing the result once: 8 MB.  Its *bandwidth limit* is measured here too, as the
  time numpy takes to copy 1e6 float32 into an existing array (the same 8 MB of traffic,
  no arithmetic).  Targets: >= 3x faster than eager; within 1.5x of that limit.
* **An MLP forward** (784-256-128-10, batch 128, ReLU and GELU): the matmuls stay with
  the engine, each bias + activation becomes one kernel.  Target: >= 1.2x faster.  Its
  *fusion bound* is measured beside it: the same three matmuls alone (numpy's
  ``x @ W.T``, what both eager and compiled code call), so that eager's time / that time
  is the most any fusion of the rest could gain while BLAS does the matmuls.  Beyond that
  bound only the matmuls themselves can go faster: the same forward compiled with
  ``options={"freezing": True}`` (torch's inference option: each weight is multiplied
  in a transposed copy, ``learntorch/compiler/freezing.py``) is a row of its own.
* **Compile time** of that MLP forward: the first call minus an eager call, in a fresh
  Python process with an empty Numba cache (cold: Numba compiles the kernels) and with
  the cache filled by an earlier process (cached: the kernels are loaded from disk).
  Targets: <= 2 s cold, <= 0.1 s cached.  The CPU time of the process is reported
  beside the wall clock: on a busy machine the wall clock mostly measures waiting.

No test asserts these figures; ``--markdown`` writes them to ``benchmarks/compile.md``,
which ``benchmarks/report.py`` puts into BENCHMARKS.md.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import learntorch

try:
    import torch
except ImportError:  # the yardstick, not a dependency
    torch = None

HERE = Path(__file__).resolve().parent
N = 10**6


def chain(m, x):
    """8 elementwise ops (m is learntorch or torch)."""
    y = (x * 1.5 + 0.5).relu() * x - 0.25
    return (y.clamp(-2.0, 2.0) + x) * 0.5


def mlp(m, activation):
    m.manual_seed(0)
    act = m.nn.ReLU() if activation == "relu" else m.nn.GELU()
    act2 = m.nn.ReLU() if activation == "relu" else m.nn.GELU()
    return m.nn.Sequential(m.nn.Linear(784, 256), act, m.nn.Linear(256, 128), act2,
                           m.nn.Linear(128, 10)).eval()


def _torch_compile(fn, options=None):
    """torch.compile(fn), or None when Inductor cannot build here (no C++ compiler)."""
    if torch is None:
        return None
    try:
        compiled = torch.compile(fn, options=options)
        return compiled
    except Exception:  # noqa: BLE001 -- reported as a missing column
        return None


def _loops_for(fn, seconds):
    fn()
    start = time.perf_counter()
    fn()
    one = max(time.perf_counter() - start, 1e-7)
    return max(1, int(seconds / one))


def pair_mode(contenders, repeats, seconds):
    """{name: [seconds per call, one per round]}: each round times every contender once."""
    for fn in contenders.values():  # warm-up: compilation, caches
        fn()
        fn()
    loops = {name: _loops_for(fn, seconds) for name, fn in contenders.items()}
    times = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            for _ in range(loops[name]):
                fn()
            times[name].append((time.perf_counter() - start) / loops[name])
    return times


def spread(values):
    return statistics.median(values), min(values), max(values)


def ratio(times, a, b):
    """Median over rounds of b's time / a's time (how many times faster a is)."""
    return spread([tb / ta for ta, tb in zip(times[a], times[b])])


def measure_chain(repeats, seconds):
    x_np = np.random.default_rng(0).standard_normal(N, dtype=np.float32)
    x = learntorch.from_numpy(x_np)
    compiled = learntorch.compile(lambda x: chain(learntorch, x))
    out = np.empty_like(x_np)
    contenders = {"eager": lambda: chain(learntorch, x), "compiled": lambda: compiled(x),
                  "copy": lambda: x_np.copy(), "copy into": lambda: np.copyto(out, x_np)}
    if torch is not None:
        tx = torch.from_numpy(x_np)
        contenders["torch"] = lambda: chain(torch, tx)
        tc = _torch_compile(lambda x: chain(torch, x))
        if tc is not None:
            try:
                tc(tx)
                contenders["torch.compile"] = lambda: tc(tx)
            except Exception:  # noqa: BLE001
                pass
    assert np.array_equal(compiled(x).numpy(), chain(learntorch, x).numpy())
    return pair_mode(contenders, repeats, seconds)


def measure_mlp(activation, repeats, seconds):
    model = mlp(learntorch, activation)
    x = learntorch.from_numpy(np.random.default_rng(1).standard_normal((128, 784),
                                                                      dtype=np.float32))
    compiled = learntorch.compile(model)
    frozen = learntorch.compile(model, options={"freezing": True})
    with learntorch.no_grad():
        np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(frozen(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)

    def no_grad(f, m):
        def run():
            with m.no_grad():
                f()
        return run
    contenders = {"eager": no_grad(lambda: model(x), learntorch),
                  "compiled": no_grad(lambda: compiled(x), learntorch),
                  "frozen": no_grad(lambda: frozen(x), learntorch),
                  "matmuls": _matmuls_alone(model, x.numpy())}
    if torch is not None:
        tmodel = mlp(torch, activation)
        tx = torch.from_numpy(x.numpy())
        contenders["torch"] = no_grad(lambda: tmodel(tx), torch)
        for name, options in (("torch.compile", None),
                              ("torch.compile frozen", {"freezing": True})):
            tc = _torch_compile(tmodel, options)
            if tc is not None:
                try:
                    with torch.no_grad():
                        tc(tx)
                    contenders[name] = no_grad(lambda tc=tc: tc(tx), torch)
                except Exception:  # noqa: BLE001
                    pass
    return pair_mode(contenders, repeats, seconds)


def _matmuls_alone(model, x):
    """The MLP's matmuls and nothing else: its forward with every bias add and activation
    taken out (the fusion bound of the module docstring)."""
    weights = [m.weight.detach().numpy() for m in model if hasattr(m, "weight")]

    def run():
        h = x
        for w in weights:
            h = np.matmul(h, w.T)
        return h
    return run


_COMPILE_TIME = """
import time, numpy as np, learntorch
from benchmarks.compile import mlp
model = mlp(learntorch, "{activation}")
x = learntorch.from_numpy(np.random.default_rng(1).standard_normal((128, 784), dtype=np.float32))

def timed(f):
    wall, cpu = time.perf_counter(), time.process_time()
    f()
    return time.perf_counter() - wall, time.process_time() - cpu

with learntorch.no_grad():
    model(x); eager = timed(lambda: model(x))
    compiled = learntorch.compile(model)
    first = timed(lambda: compiled(x))
    learntorch.compiler.reset()  # entries forgotten, kernels dropped from memory too
    again = timed(lambda: compiled(x))
print(first[0] - eager[0], again[0] - eager[0], first[1] - eager[1], again[1] - eager[1])
"""


def measure_compile_time(activation, repeats):
    """(cold, cached on disk, after reset): each a pair (wall-clock seconds, CPU seconds of
    the process), each a spread; each repeat is two fresh processes on a new empty cache;
    "after reset" is the second process's second compile."""
    walls = {"cold": [], "cached": [], "after reset": []}
    cpus = {"cold": [], "cached": [], "after reset": []}
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            env["NUMBA_CACHE_DIR"] = env["LEARNTORCH_COMPILE_CACHE"] = cache
            for into in ("cold", "cached"):
                out = subprocess.run([sys.executable, "-c", _COMPILE_TIME.format(
                    activation=activation)], env=env, capture_output=True, text=True,
                    check=True, cwd=HERE.parent)
                first, again, first_cpu, again_cpu = map(float, out.stdout.split()[-4:])
                walls[into].append(first)
                cpus[into].append(first_cpu)
            walls["after reset"].append(again)
            cpus["after reset"].append(again_cpu)
    return tuple((spread(walls[k]), spread(cpus[k])) for k in ("cold", "cached", "after reset"))


# ---------------------------------------------------------------- the report
def _ms(s):
    return f"{s * 1e3:.3g} ms"


def _cell(times, name):
    if name not in times:
        return "—"
    median, low, high = spread(times[name])
    return f"{_ms(median)} ({_ms(low)}–{_ms(high)})"


def _ratio_cell(times, a, b):
    if a not in times or b not in times:
        return "—"
    median, low, high = ratio(times, a, b)
    return f"{median:.2f}× ({low:.2f}–{high:.2f})"


def report(figures, repeats, command):
    chain_t = figures["chain"]
    bandwidth = spread([c / t for c, t in zip(chain_t["copy"], chain_t["compiled"])])
    into = spread([c / t for c, t in zip(chain_t["copy into"], chain_t["compiled"])])
    speedup = ratio(chain_t, "compiled", "eager")
    lines = [
        "## compile",
        "",
        f"`learntorch.compile` measured with `{command}`: eager learntorch, the compiled "
        "function, eager PyTorch and torch.compile (Inductor's C++ code) in one process, "
        f"taking turns; each time is the median of {repeats} rounds with the spread "
        "(min–max); a speed-up is eager's time ÷ compiled's, per round. "
        "Not asserted by any test (benchmarks/compile.py).",
        "",
        "| Case | eager learntorch | learntorch.compile | speed-up | torch | torch.compile |",
        "|---|---|---|---|---|---|",
    ]
    mlp_title = "MLP 784-256-128-10 forward, batch 128, {} (no_grad)"
    rows = [("8-op elementwise chain, 1e6 float32", "chain", "")]
    for key, act in (("mlp_relu", "ReLU"), ("mlp_gelu", "GELU")):
        rows += [(mlp_title.format(act), key, ""),
                 (mlp_title.format(act) + ', options={"freezing": True}', key, " frozen")]
    for title, key, frozen in rows:
        t = figures[key]
        compiled = "frozen" if frozen else "compiled"
        lines.append(f"| {title} | {_cell(t, 'eager')} | {_cell(t, compiled)} | "
                     f"{_ratio_cell(t, compiled, 'eager')} | {_cell(t, 'torch')} | "
                     f"{_cell(t, 'torch.compile' + frozen)} |")
    lines += ["", "The chain's bandwidth limit is the same 8 MB of traffic with no arithmetic: "
              f"numpy copying 1e6 float32 into a new array (`x.copy()`, what any out-of-place "
              f"function pays, the new pages included) takes {_cell(chain_t, 'copy')}; the "
              f"compiled chain takes {1 / bandwidth[0]:.2f}× that time ({1 / bandwidth[2]:.2f}–"
              f"{1 / bandwidth[1]:.2f}). Into an existing array (`np.copyto`, no new pages) the "
              f"copy takes {_cell(chain_t, 'copy into')}, and the compiled chain "
              f"{1 / into[0]:.2f}× that.", ""]
    (cold, cached, after_reset) = figures["compile_time"]
    lines += ["| Target | Measured | Met? |", "|---|---|---|",
              f"| compiled 8-op chain ≥ 3× faster than eager | {speedup[0]:.2f}× "
              f"({speedup[1]:.2f}–{speedup[2]:.2f}) | {'yes' if speedup[0] >= 3 else 'no'} |",
              f"| compiled chain within 1.5× of the bandwidth limit | {1 / bandwidth[0]:.2f}× "
              f"| {'yes' if 1 / bandwidth[0] <= 1.5 else 'no'} |"]
    for key, title in (("mlp_relu", "ReLU"), ("mlp_gelu", "GELU")):
        s = ratio(figures[key], "compiled", "eager")
        bound = ratio(figures[key], "matmuls", "eager")
        lines.append(f"| compiled MLP forward ({title}) ≥ 1.2× faster | {s[0]:.2f}× "
                     f"({s[1]:.2f}–{s[2]:.2f}); fusion bound {bound[0]:.2f}× "
                     f"({bound[1]:.2f}–{bound[2]:.2f}) | {'yes' if s[0] >= 1.2 else 'no'} |")
        s = ratio(figures[key], "frozen", "eager")
        lines.append(f'| the same, with `options={{"freezing": True}}` | {s[0]:.2f}× '
                     f"({s[1]:.2f}–{s[2]:.2f}) | {'yes' if s[0] >= 1.2 else 'no'} |")
    for (wall, cpu), title, limit in (
            (cold, "cold Numba cache", 2),
            (cached, "cached on disk (a new process)", 0.1),
            (after_reset, "cached (same process, after learntorch.compiler.reset())", 0.1)):
        lines.append(f"| compile time of the MLP forward, {title} ≤ {limit:g} s | "
                     f"{wall[0]:.3f} s ({wall[1]:.3f}–{wall[2]:.3f}); CPU time {cpu[0]:.3f} s "
                     f"({cpu[1]:.3f}–{cpu[2]:.3f}) | {'yes' if wall[0] <= limit else 'no'} |")
    lines += ["",
              "The *fusion bound* of an MLP row is eager's time ÷ the time of its three "
              "matmuls alone (numpy's `x @ W.T`, with no bias, activation or module call): "
              "the speed-up a compiled forward would reach if everything but the matmuls took "
              "no time at all, as long as BLAS computes the matmuls for both. Only a faster "
              'matmul goes past it: with `options={"freezing": True}` (torch\'s option for '
              "inference) the compiled program multiplies by a transposed copy of each weight, "
              "made once and made again when the weight changes, which BLAS reads faster "
              "(learntorch/compiler/freezing.py); torch.compile's frozen column is Inductor "
              "with the same option.", "",
              "A compile time is the first call's time minus an eager call's: the capture (one "
              "eager run of the function), building the program, loading or compiling its "
              "kernels, and the replay. The wall-clock figure decides *Met?*; the CPU time of "
              "the process (all its threads) is what the compile itself costs, and stays "
              "meaningful when other work on the machine makes the wall clock wait.", "",
              f"Machine: {os.cpu_count()} logical cores; load average {figures['load'][0]} at "
              f"the start, {figures['load'][1]} at the end (other work on the machine makes "
              "the spread wide).", ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 repeats of ~0.05 s")
    parser.add_argument("--markdown", action="store_true",
                        help="write benchmarks/compile.md (BENCHMARKS.md's compile section)")
    args = parser.parse_args(argv)
    repeats, seconds = (3, 0.05) if args.quick else (args.repeats, 0.2)
    load_before = " / ".join(f"{v:.2f}" for v in os.getloadavg())
    figures = {"chain": measure_chain(repeats, seconds),
               "mlp_relu": measure_mlp("relu", repeats, seconds),
               "mlp_gelu": measure_mlp("gelu", repeats, seconds),
               "compile_time": measure_compile_time("gelu", repeats)}
    figures["load"] = (load_before, " / ".join(f"{v:.2f}" for v in os.getloadavg()))
    command = "python -m benchmarks.compile" + (" --quick" if args.quick else
                                                f" --repeats {repeats}")
    text = report(figures, repeats, command)
    print(text)
    if args.markdown:
        (HERE / "compile.md").write_text(text, encoding="utf-8")
        from .report import splice_compile_section
        splice_compile_section(HERE.parent / "BENCHMARKS.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
