"""The performance suite: learntorch against numpy and PyTorch, measured in the same run.

    python -m benchmarks --quick                        # a short sanity run
    python -m benchmarks --json run.json --markdown BENCHMARKS.md
    python -m benchmarks --only matmul                  # one group (or case)
    python -m benchmarks --list

Layout:

* ``timing.py``    -- the harness: warm-up, calibrated inner loops, median of repeats
* ``suite.py``     -- what a case is (``@case`` + ``Contenders``), targets, what a row holds
* ``bench_*.py``   -- the cases, one file per group (autograd, elementwise, ...)
* ``runner.py``    -- timing each library on a case, rows, running the whole suite
* ``workers.py``   -- one process per library, so no library is timed beside another's threads
* ``machine.py``   -- the machine the figures belong to
* ``report.py``    -- BENCHMARKS.md from a run

Adding a case is one small function in a ``bench_<group>.py`` file: build the
inputs, return ``Contenders(learntorch=..., numpy=..., torch=...)`` -- one
zero-argument callable per library -- and decorate it with
``@case("name", <parameters>, tiny=<smaller parameters for the smoke test>)``.
No timing test asserts a figure: the suite reports, people judge.
"""
