"""Running cases: time each library, put the times together into a row, run a suite.

``time_one`` builds a case and times one library's contender.  ``run_case``
calls it for every library, round after round, and assembles the row.  By default ``run_suite``
does the timing in worker processes, one per library (see workers.py), so that
no library's thread pool is in the process while another one is timed.
"""
import datetime
import gc
import importlib
import statistics
import time
import traceback
from dataclasses import asdict, replace

from .suite import GROUPS, LIBRARIES, Metric
from .timing import FULL, measure


def time_one(case, library, settings=FULL, tiny=False):
    """Build ``case`` and time ``library``'s contender: {seconds, metric, note}."""
    contenders = case.fn(**(case.tiny if tiny else case.params))
    fn = getattr(contenders, library)
    timing = measure(fn, settings) if fn is not None else None
    return {"seconds": timing.as_dict() if timing else None,
            "metric": asdict(contenders.metric) if contenders.metric else None,
            "note": contenders.note}


def _ratio(ours, theirs):
    if ours is None or theirs is None or theirs["median"] <= 0:
        return None
    return ours["median"] / theirs["median"]


def make_row(case, params, results):
    """The row (see suite.py) from ``{library: time_one(...)}``."""
    seconds = {lib: results[lib]["seconds"] for lib in LIBRARIES}
    spec = next((r["metric"] for r in results.values() if r["metric"]), None)
    metric = None
    if spec is not None:
        m = Metric(**spec)
        metric = {"unit": m.unit, **{lib: m.of(s["median"]) if s else None
                                     for lib, s in seconds.items()}}
    row = {
        "group": case.group, "name": case.name, "key": case.key, "params": params,
        "note": results["learntorch"]["note"],
        "seconds": seconds,
        "metric": metric,
        "ratios": {f"vs_{lib}": _ratio(seconds["learntorch"], seconds[lib])
                   for lib in LIBRARIES if lib != "learntorch"},
        "target": None,
    }
    if case.target is not None:
        row["target"] = case.target.evaluate(row)
    return row


def run_case(case, settings=FULL, tiny=False, timer=time_one):
    """Time every library on ``case`` (in this process unless ``timer`` says otherwise).

    The measurements take turns: round r times each library once, so a stretch when the
    machine is slower (a neighbour on a shared host) slows every library alike instead
    of the one whose five measurements fell in it.  On a shared 2-core machine, timing
    each library's repeats in one block moved a ratio by 20-30% from run to run.
    """
    rounds = {lib: [] for lib in LIBRARIES}
    for r in range(settings.repeats):
        one = replace(settings, repeats=1, warmup=settings.warmup if r == 0 else 0)
        for lib in LIBRARIES:
            if settings.seconds:
                time.sleep(SETTLE_SECONDS)
            rounds[lib].append(timer(case, lib, one, tiny))
    results = {lib: _combined(replies) for lib, replies in rounds.items()}
    gc.collect()  # free this case's inputs and graphs before timing the next
    return make_row(case, case.tiny if tiny else case.params, results)


#: idle time before each measurement: the thread pools of the library timed just before
#: (OpenBLAS's, PyTorch's OpenMP) keep spinning on the cores for a while after their last
#: job, and would otherwise slow whichever library is timed next (measured: a 128x128
#: matmul 27 -> 43 us, an MLP step 0.9 -> 1.35 ms, when timed right after PyTorch)
SETTLE_SECONDS = 0.3


def _combined(replies):
    """One library's rounds as one ``time_one`` reply: the median and minimum over them."""
    first = replies[0]
    samples = [r["seconds"] for r in replies if r["seconds"] is not None]
    if not samples:
        return first
    medians = [s["median"] for s in samples]
    seconds = {"median": statistics.median(medians), "min": min(s["min"] for s in samples),
               "loops": samples[0]["loops"], "repeats": sum(s["repeats"] for s in samples)}
    return dict(first, seconds=seconds)


def group_descriptions():
    """The first line of each bench_<group>.py docstring: the report's intro to the group."""
    descriptions = {}
    for group in GROUPS:
        doc = (importlib.import_module(f"{__package__}.bench_{group}").__doc__ or "").strip()
        descriptions[group] = doc.splitlines()[0] if doc else ""
    return descriptions


def run_suite(cases, settings=FULL, tiny=False, command="", progress=None, isolated=True):
    """Run ``cases`` one after another; return the run (machine, settings, rows) as a dict.

    ``isolated``: time each library in its own worker process (workers.py);
    otherwise all in this one.  A case that raises becomes a row with an
    ``error`` (the engine grows while the suite exists: one missing op must not
    hide every other figure).  ``progress(row)`` is called as each row is done.
    """
    from .machine import describe, load_average
    from .workers import Workers

    run = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "command": command, "settings": asdict(settings), "tiny": tiny,
           "isolated": isolated, "machine": describe(), "groups": group_descriptions(),
           "rows": []}
    with Workers() as workers:
        for c in cases:
            try:
                row = run_case(c, settings, tiny, timer=workers.time if isolated else time_one)
            except Exception as error:  # noqa: BLE001  (reported in the row, and printed)
                row = {"group": c.group, "name": c.name, "key": c.key,
                       "params": c.tiny if tiny else c.params,
                       "error": f"{type(error).__name__}: {error}".splitlines()[0],
                       "traceback": getattr(error, "worker_traceback", None)
                       or traceback.format_exc()}
            run["rows"].append(row)
            if progress:
                progress(row)
    run["load_average_end"] = load_average()
    return run
