"""Where a submission runs, seen from inside: what it can read, who it is, what else
it can reach -- and, where the machine allows less, the grader says so.

A "spy" submission puts what it finds into the exception its solution raises; the
visible check's feedback carries that back, so the specs read the sandbox through
the same door a learner would, not through the grader's code.
"""
import json
import os
import re
import socket
import sys

import pytest

from course_fixtures import RIGHT, TINY_SOURCES, read_gradebook, run_grader, write_submission
from course.grading import sandbox

SPY = '''
import json, os, pwd, socket, sys
def look():
    seen = {{"uid": os.getuid()}}
    try:
        seen["user"] = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        seen["user"] = None
    def readable(path):
        try:
            with open(path, "rb") as stream:
                stream.read(1)
            return True
        except OSError:
            return False
    seen["source"] = readable("{source}/01_tiny.ipynb")
    seen["out"] = os.path.exists("{out}")
    seen["classmate"] = readable("{classmate}")
    import course
    solutions = os.path.join(os.path.dirname(course.__file__), "solutions")
    try:
        seen["solutions"] = len(os.listdir(solutions))
    except OSError:
        seen["solutions"] = None
    seen["processes"] = sum(1 for p in os.listdir("/proc") if p.isdigit())
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
        seen["network"] = True
    except OSError:
        seen["network"] = False
    with open("scratch.txt", "w") as stream:
        seen["writes_its_folder"] = stream.write("x") == 1
    return seen
def double(x):
    raise RuntimeError("SEEN" + json.dumps(look()) + "NEES")
'''


@pytest.fixture
def server():
    """A server on this machine that a submission must not reach."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    yield listener.getsockname()[1]
    listener.close()


def grade_spy(tmp_path, learner_copy, port, *options):
    out = tmp_path / "graded"
    classmate = write_submission(learner_copy, tmp_path / "inbox" / "honest" / "01_tiny.ipynb",
                                 RIGHT)
    spy = SPY.format(source=TINY_SOURCES, out=out, classmate=classmate, port=port)
    paths = [classmate, write_submission(learner_copy, tmp_path / "inbox" / "spy" /
                                         "01_tiny.ipynb", {**RIGHT, "01.1": spy})]
    done = run_grader("--source", TINY_SOURCES, *paths, "--out", out, "--timeout", "20",
                      "--jobs", "2", *options)
    assert done.returncode == 0, done.stdout + done.stderr
    table = read_gradebook(out)
    assert [r["points"] for r in table["honest/01_tiny.ipynb"].values()] == [2, 1, 1]
    feedback = (out / "feedback" / "spy" / "01_tiny.md").read_text()
    seen = json.loads(re.search(r"SEEN(.*?)NEES", feedback).group(1))
    return done.stdout, seen


@pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root; CI is root")
def test_as_root_a_submission_runs_as_a_dedicated_user_in_a_sandbox(tmp_path, learner_copy,
                                                                    server):
    output, seen = grade_spy(tmp_path, learner_copy, server)
    assert output.startswith("isolation: full")
    assert seen["uid"] != 0 and seen["user"].startswith("learntorch-grader-")
    assert seen == dict(seen, source=False, out=False, classmate=False, solutions=None,
                        network=False, writes_its_folder=True)
    assert seen["processes"] <= 3   # its kernel, and the sandbox's first process


def test_a_grader_that_is_not_root_says_isolation_is_reduced_and_still_sandboxes(
        tmp_path, learner_copy, server):
    output, seen = grade_spy(tmp_path, learner_copy, server, "--isolation", "namespaces")
    assert output.startswith("isolation reduced: ") and "as your own user" in output
    assert seen == dict(seen, source=False, out=False, classmate=False, network=False,
                        writes_its_folder=True)
    assert seen["solutions"] in (None, 0)   # hidden, or an empty folder in its place


def test_without_bubblewrap_the_grader_says_what_a_submission_can_reach(tmp_path,
                                                                       learner_copy, server):
    output, seen = grade_spy(tmp_path, learner_copy, server, "--isolation", "reduced")
    first = output.splitlines()[0]
    assert first.startswith("isolation reduced: reduced isolation was asked for")
    assert "can read every file that user can read" in first
    assert "can signal the grader" in first and "Install bubblewrap" in first
    assert seen["writes_its_folder"] is True


def test_without_bubblewrap_limits_still_hold(tmp_path, learner_copy):
    greedy = {**RIGHT, "01.1": "import numpy\nbig = numpy.ones(3 * 1024 ** 3 // 8)\n"}
    path = write_submission(learner_copy, tmp_path / "greedy" / "01_tiny.ipynb", greedy)
    out = tmp_path / "graded"
    done = run_grader("--source", TINY_SOURCES, path, "--out", out, "--timeout", "20",
                      "--isolation", "reduced")
    assert done.returncode == 0, done.stderr
    [rows] = read_gradebook(out).values()
    assert (rows["01.1"]["status"], rows["01.2"]["status"]) == ("memory-limit", "passed")


def test_as_root_without_bubblewrap_kernels_still_run_as_a_dedicated_user(tmp_path):
    isolation = sandbox.Isolation("reduced", "bubblewrap (bwrap) is not installed",
                                  dedicated=True)
    account = sandbox.Account("learntorch-grader-1", 12345, 12345)
    argv, env, cwd = sandbox.command(isolation, account, tmp_path, sandbox.Limits(
        cpu_seconds=30), [], [sys.executable, "-m", "ipykernel_launcher"], tmp_path / "numba")
    assert argv[:4] == ["setpriv", "--reuid=12345", "--regid=12345", "--clear-groups"]
    assert "--no-new-privs" in argv and "--pdeathsig=KILL" in argv
    limits = argv[argv.index("prlimit") + 1:argv.index("--", argv.index("prlimit"))]
    assert {a.split("=")[0] for a in limits} == {"--as", "--cpu", "--nproc", "--nofile",
                                                 "--fsize", "--core"}
    assert "bwrap" not in argv and env["HOME"] == str(tmp_path / "home")
    assert "a dedicated unprivileged user" in isolation.describe()
