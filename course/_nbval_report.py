"""A pytest plugin for grading: what happened in each notebook cell that nbval ran.

``grade`` runs ``python -m pytest -p course._nbval_report --learntorch-report FILE
--nbval-lax ...`` on the notebooks it builds.  nbval makes each code cell one test
item, run in order in one kernel, and goes on after a failed cell.  This plugin
appends one JSON line per event to FILE, flushed at once so that the record
survives if pytest itself is killed:

    {"notebook": PATH, "cell": N, "event": "start"}
    {"notebook": PATH, "cell": N, "event": "done", "outcome": "passed" | "failed" | "skipped",
     "timed_out": bool, "kernel_died": bool, "ename": ..., "evalue": ..., "message": ...}

``cell`` is nbval's number: the position among the notebook's *code* cells.
``ename``/``evalue`` are the exception the cell raised in the kernel (type and
message, never its traceback).

It also makes nbval notice a dead kernel (``os._exit``, a segfault) within a second:
nbval would otherwise wait for the whole cell timeout before giving up on it.
"""
import json
import time
from queue import Empty

import pytest

_KERNEL_DIED = "_learntorch_kernel_died"


def pytest_addoption(parser):
    parser.addoption("--learntorch-report", default=None,
                     help="append per-cell results as JSON lines to this file (course grading)")


def _watch_for_dead_kernels():
    """Wrap nbval's RunningKernel.await_reply to poll in one-second steps and give up
    (as a timeout, which nbval handles) as soon as the kernel process is gone."""
    try:
        from nbval.kernel import RunningKernel
    except ImportError:  # no nbval: nothing to watch
        return
    if getattr(RunningKernel.await_reply, "_learntorch", False):
        return
    original = RunningKernel.await_reply

    def await_reply(self, msg_id, timeout=None):
        deadline = None if timeout is None else time.monotonic() + float(timeout)
        while True:
            left = 1.0 if deadline is None else deadline - time.monotonic()
            try:
                return original(self, msg_id, timeout=max(0.01, min(1.0, left)))
            except Empty:
                if not self.is_alive():
                    setattr(self, _KERNEL_DIED, True)
                    raise
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    await_reply._learntorch = True
    RunningKernel.await_reply = await_reply


def pytest_configure(config):
    path = config.getoption("--learntorch-report")
    config._learntorch_report = open(path, "a", encoding="utf-8") if path else None
    if path:
        _watch_for_dead_kernels()


def pytest_unconfigure(config):
    report = getattr(config, "_learntorch_report", None)
    if report is not None:
        report.close()


def _write(config, record):
    report = getattr(config, "_learntorch_report", None)
    if report is not None:
        report.write(json.dumps(record) + "\n")
        report.flush()


def _is_cell(item):
    return hasattr(item, "cell_num") and hasattr(item, "cell")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if _is_cell(item):
        _write(item.config, {"notebook": str(item.parent.fspath), "cell": item.cell_num,
                             "event": "start"})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not _is_cell(item) or call.when != "call":
        return
    kernel = getattr(item.parent, "kernel", None)
    error = next((out for out in (item.test_outputs or [])
                  if out.get("output_type") == "error"), None)
    message = ""
    if call.excinfo is not None:
        message = str(call.excinfo.value).split("\n", 1)[0]
    _write(item.config, {
        "notebook": str(item.parent.fspath),
        "cell": item.cell_num,
        "event": "done",
        # after a timeout nbval expects later cells to fail (xfail): a cell that then
        # passes anyway is reported as passed, one that fails as failed
        "outcome": ("passed" if report.passed else
                    "skipped" if report.skipped and not hasattr(report, "wasxfail")
                    else "failed"),
        "timed_out": "Timeout of" in message,
        "kernel_died": bool(getattr(kernel, _KERNEL_DIED, False))
                       or "Kernel dead" in message,
        "ename": error.get("ename") if error else None,
        "evalue": error.get("evalue") if error else None,
        "message": message,
    })
