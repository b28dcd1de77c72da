"""Turn a benchmark run (the dict that ``--json`` saves) into BENCHMARKS.md.

    python -m benchmarks --json run.json --markdown BENCHMARKS.md   # run and write
    python -m benchmarks.report run.json -o BENCHMARKS.md           # rewrite from a saved run

The page holds: the machine, the date and command, the targets (met or not),
then one table per group.  Times are medians per call; a ratio is
learntorch's time divided by the other library's, so below 1 learntorch is faster.
"""
import argparse
import json
from pathlib import Path

DASH = "—"


def libraries(row):
    """The libraries a row measured, learntorch first (the run decides; see suite.LIBRARIES)."""
    return list(row["seconds"])


def format_seconds(seconds):
    if seconds is None:
        return DASH
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale * 0.9995:  # 0.9996 s reads "1 s", not "1e+03 ms"
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_ratio(ratio):
    return DASH if ratio is None else f"{ratio:.3g}×"


def format_number(value):
    return DASH if value is None else f"{value:.3g}"


def _median(row, library):
    seconds = row.get("seconds", {}).get(library)
    return seconds["median"] if seconds else None


def metric_text(row):
    metric = row.get("metric")
    if not metric:
        return ""
    values = " / ".join(format_number(metric[lib]) for lib in libraries(row))
    return f"{values} {metric['unit']}"


def console_line(row):
    """One row as a line of text, printed while the suite runs."""
    if row.get("error"):
        return f"{row['group']:<12} {row['name']:<56} ERROR {row['error']}"
    times = "  ".join(f"{lib[:5]} {format_seconds(_median(row, lib)):>9}" for lib in libraries(row))
    ratios = "  ".join(f"÷{lib[:5]} {format_ratio(r):>7}" for lib, r in _ratios(row))
    return f"{row['group']:<12} {row['name']:<56} {times}   {ratios}   {metric_text(row)}"


def _ratios(row):
    return [(lib, row["ratios"][f"vs_{lib}"]) for lib in libraries(row)[1:]]


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def _machine_section(run):
    m = run["machine"]
    threads = ", ".join(f"{k} {v}" for k, v in (m.get("threads") or {}).items()) or "unknown"
    commit = f" (commit {m['learntorch_commit']})" if m.get("learntorch_commit") else ""
    libraries = ", ".join(f"{name} {m.get(name) or 'not installed'}"
                          for name in ("numpy", "numba", "torch"))
    load = f"{_load(m.get('load_average'))} at start, {_load(run.get('load_average_end'))} at end"
    rows = [
        ("CPU", f"{m['cpu']} ({m['logical_cores']} logical cores, {m['usable_cores']} usable)"),
        ("Memory", f"{m['memory_gib']} GiB"),
        ("OS", m["os"]),
        ("Python", m["python"]),
        ("learntorch", f"{m.get('learntorch')}{commit}"),
        ("Libraries", libraries),
        ("numpy's BLAS", m.get("blas")),
        ("Threads", threads),
        ("Load average (1, 5, 15 min)", load),
    ]
    lines = ["## Machine", ""] + _table(("", ""), rows)
    if _busy(run):
        lines += ["", f"**Warning:** the load average ({_load(m['load_average'])}) shows other work "
                  f"on these {m['usable_cores']} cores when the suite started: the figures are noisy."]
    return lines


def _load(triple):
    return DASH if not triple else " / ".join(f"{x:.2f}" for x in triple)


def _busy(run):
    """Was something else running when the suite started?

    Only the load at the start counts: by the end the suite's own threads are in it.
    """
    cores = run["machine"].get("usable_cores") or 1
    load = run["machine"].get("load_average")
    return bool(load) and load[0] > cores / 4 + 0.5


def _targets_section(rows):
    targets = [(r["target"], r["name"]) for r in rows if r.get("target")]
    if not targets:
        return []
    cells = [(t["text"], name, t["measured"],
              DASH if t["met"] is None else ("yes" if t["met"] else "**no**"))
             for t, name in targets]
    return (["## Targets", "", "Goals from the issues; reported here, never asserted by a test.", ""]
            + _table(("Target", "Case", "Measured", "Met?"), cells))


def _group_section(group, description, rows):
    lines = [f"## {group}", ""]
    if description:
        lines += [description, ""]
    measured = next((libraries(r) for r in rows if not r.get("error")), ["learntorch"])
    header = ("Case", *measured, *(f"÷ {lib}" for lib in measured[1:]), " / ".join(measured))
    cells, notes = [], []
    for row in rows:
        if row.get("error"):
            cells.append((row["name"], f"error: {row['error']}", *[""] * (len(header) - 2)))
            continue
        name = row["name"]
        if row.get("note"):
            if row["note"] not in notes:
                notes.append(row["note"])
            name += f" [{notes.index(row['note']) + 1}]"
        cells.append((name, *(format_seconds(_median(row, lib)) for lib in libraries(row)),
                       *(format_ratio(r) for _, r in _ratios(row)), metric_text(row)))
    lines += _table(header, cells)
    if notes:
        lines += [""] + [f"[{i}] {note}  " for i, note in enumerate(notes, 1)]
    return lines


def to_markdown(run):
    """The BENCHMARKS.md text for one run (the dict written by ``--json``)."""
    settings = run["settings"]
    lines = [
        "# learntorch benchmarks",
        "",
        f"Measured {run['date']} with `{run['command']}`. Generated by `benchmarks/report.py`;",
        "rerun the command to refresh this page.",
        "",
        f"Each time is the median of {settings['repeats']} measurements of about "
        f"{settings['seconds']} s each (after {settings['warmup']} untimed warm-up call), "
        "per call. learntorch, numpy and PyTorch were measured in the same run, "
        + ("each in its own worker process (--isolated), "
           if run.get("isolated", True) else "all in one process (pair mode, as a notebook "
           "comparing them does: PyTorch's threads are there while learntorch runs), ") +
        "taking turns: one measurement of each library per round, after 0.3 s of quiet "
        "(benchmarks/runner.py). " +
        "**÷ numpy** and **÷ torch** are learntorch's time divided by the other library's: "
        "below 1.00× learntorch is faster. The last column is the same times as a rate "
        f"(or a cost per op); {DASH} means the library has no equivalent or is not installed.",
        "",
    ]
    lines += _machine_section(run) + [""]
    lines += _targets_section(run["rows"]) + [""]
    groups = list(dict.fromkeys(row["group"] for row in run["rows"]))
    for group in groups:
        rows = [r for r in run["rows"] if r["group"] == group]
        lines += _group_section(group, run.get("groups", {}).get(group, ""), rows) + [""]
    lines += (_tiers_section() + _distributed_section() + _compile_section()
              + _gpu_section())
    return "\n".join(lines).rstrip() + "\n"


# Sections whose contenders are not this suite's (whole MPI jobs; four compile contenders;
# two checkouts of learntorch):
# their own commands measure them and write the figures to a file that the page includes.
DISTRIBUTED_FIGURES = Path(__file__).resolve().parent / "distributed_figures.md"
COMPILE_FIGURES = Path(__file__).resolve().parent / "compile.md"
TIERS_FIGURES = Path(__file__).resolve().parent / "tiers_before_after.md"


def _included(path):
    """The lines of a figures file (nothing when it was never written)."""
    return path.read_text(encoding="utf-8").rstrip().splitlines() if path.exists() else []


def _distributed_section():
    """learntorch.distributed's figures, by ``python -m benchmarks.distributed --markdown
    benchmarks/distributed_figures.md``."""
    text = ["## distributed", "",
            "All-reduce and DDP step against mpi4py and one process: the contenders are MPI "
            "jobs, not libraries in one process, so `python -m benchmarks.distributed "
            "--markdown benchmarks/distributed_figures.md` measures them and this page shows "
            "its last run."]
    figures = _included(DISTRIBUTED_FIGURES)
    return text + ([""] + figures if figures else []) + [""]


def _tiers_section():
    """The pair-mode ratios of the tree before the two tiers and this one, by ``python -m
    benchmarks.before_after --markdown benchmarks/tiers_before_after.md`` (its own heading):
    two checkouts of learntorch are two contenders this suite cannot run in one process."""
    figures = _included(TIERS_FIGURES)
    return figures + [""] if figures else []


def _compile_section():
    """learntorch.compile's figures, by ``python -m benchmarks.compile --markdown`` (the file
    holds its own "## compile" heading)."""
    figures = _included(COMPILE_FIGURES)
    return figures + [""] if figures else []


def splice_section(path, text, before):
    """Put ``text``, a section with its own "## " heading, into the page at ``path``:
    where the section of that heading is, replacing it, else before the section headed
    ``before`` -- so that a benchmark run on its own updates its part of the page."""
    page = Path(path).read_text(encoding="utf-8")
    heading = text.lstrip().splitlines()[0]
    start = page.find(f"\n{heading}\n")
    if start >= 0:
        end = page.find("\n## ", start + 1)
        page = page[:start] + (page[end:] if end >= 0 else "\n")
    place = page.find(f"\n{before}")
    page = page[:place] + "\n" + text.rstrip() + "\n" + page[place:]
    Path(path).write_text(page, encoding="utf-8")


def splice_compile_section(path, text):
    """The "## compile" section of ``benchmarks/compile.py``, before "## GPU"."""
    splice_section(path, text, "## GPU")


def splice_tiers_section(path, text):
    """The "## Two tiers" section of ``benchmarks/before_after.py``, where the suite's page
    has it: before "## distributed"."""
    splice_section(path, text, "## distributed")


def _gpu_section():
    """Where the GPU figures come from: they need a real GPU, which this suite does not ask for."""
    return ["## GPU", "",
            "The CUDA kernels are timed by `benchmarks/gpu_check.sh` on a machine with an NVIDIA "
            "GPU: it runs the CUDA tests natively and `python -m benchmarks.bench_gpu` "
            "(learntorch CUDA against PyTorch CUDA: add, row sums, softmax, matmul "
            "GFLOP/s, an MLP step) and writes `gpu_check.txt`. Its figures are added here "
            "when a run on a GPU exists; everywhere else the CUDA code is tested under Numba's "
            "simulator and compiled to PTX for sm_90 by the tests.", ""]


def write(run, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_markdown(run))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="a JSON file written by python -m benchmarks --json")
    parser.add_argument("-o", "--output", default="BENCHMARKS.md")
    args = parser.parse_args(argv)
    with open(args.run, encoding="utf-8") as f:
        write(json.load(f), args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
