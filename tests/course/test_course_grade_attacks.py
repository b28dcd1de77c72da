"""A hostile submission earns nothing it did not solve, and cannot touch what decides
a grade.

Each attack below is the whole of the first solution cell of an otherwise untouched
learner copy (the other exercises keep their stubs): one line, or a few, that earned
full marks from a grader running in the same kernel as its checks.  All are graded in
one batch through the command an instructor types, beside an honest submission that
must keep its full marks; each spec then reads its attacker's rows.

The attacks know only what a learner can know -- the learner copy and the course's
public code -- plus, to make them as strong as possible, the paths of the grading
machine (the instructor's source folder and the gradebook folder, pasted in as
literals).  They look for the grader the way any process can, by walking /proc, and
never through the grader's own code, so these specs test the boundary, not how it
is built.
"""
import json
import os
import textwrap
import time

import nbformat
import pytest
from nbclient import NotebookClient

from course_fixtures import FIXTURES, read_gradebook, run_grader, write_submission
from course.release import release
from course import gradebook

# a chapter written like the course's own: every check cell groups its checks in a
# `with exercise(...)` block, as the attacks were first tried against
SOURCES = FIXTURES / "blocks"
CHAPTER = "02_blocks.ipynb"
RIGHT = {"02.1": "def double(x):\n    return x + x\n",
         "02.2": "def square(x):\n    return x ** 2\n",
         "02.3": "answer = 6 * 7\n"}
MARKER = "learntorch-attack-marker"

FIND_PROCESSES = '''
import os
def processes():
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as stream:
                    yield int(pid), [a.decode(errors="replace") for a in stream.read().split(b"\\0")]
            except OSError:
                pass
'''

DETACH = '''
import os, sys, time
def detached(work):
    # a daemon: double fork and a new session, so that it outlives the kernel
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                sys.argv[0] = "{marker}"
                work()
            finally:
                os._exit(0)
        os._exit(0)
'''.replace("{marker}", MARKER)

ATTACKS = {
    # nbval failed a cell only on an iopub `error` message: swallow every exception
    "custom_exc": "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n",
    # every later cell, hidden checks included, becomes `pass`
    "input_transformer": 'get_ipython().input_transformers_cleanup.append(lambda lines: ["pass\\n"])\n',
    # the instructor's sources, found through the grader's command line or known by path:
    # their solutions run here, and the stub cells that follow become `pass`
    "read_sources": FIND_PROCESSES + '''
import glob, json
folders = ["{source}"]
for pid, argv in processes():
    if "--source" in argv:
        folders.append(argv[argv.index("--source") + 1])
import course
folders.append(os.path.join(os.path.dirname(course.__file__), "solutions"))
found = []
for folder in folders:
    for path in glob.glob(os.path.join(folder, "*.ipynb")):
        try:
            cells = json.load(open(path))["cells"]
        except (OSError, ValueError):
            continue
        found += ["".join(c["source"]) for c in cells
                  if c["metadata"].get("learntorch", {{}}).get("role") == "solution"]
for source in found:
    try:
        exec(source, globals())
    except Exception:
        pass
if found:
    get_ipython().input_transformers_cleanup.append(
        lambda lines: ["pass\\n"] if "NotImplementedError" in "".join(lines) else lines)
''',
    # the checking code patched from the solution cell
    "patch_checks": '''
from course import checks
checks.exercise.__exit__ = lambda self, *error: True
for name in checks.__all__:
    if name.startswith("check_"):
        setattr(checks, name, lambda *args, **kwargs: None)
check_close = check_equal = check_function = check_shape = check_raises = lambda *a, **k: None
''',
    # a fake course.checks in sys.modules
    "fake_checks_module": '''
import sys, types
fake = types.ModuleType("course.checks")
class exercise:
    def __init__(self, *a): pass
    def __enter__(self): return self
    def __exit__(self, *error): return True
fake.exercise = exercise
fake.ExerciseCheckFailed = AssertionError
for name in ("check_close", "check_equal", "check_shape", "check_raises", "check_function"):
    setattr(fake, name, lambda *args, **kwargs: None)
sys.modules["course.checks"] = fake
import course
course.checks = fake
globals().update({n: getattr(fake, n) for n in ("check_close", "check_equal", "check_function")})
''',
    # numpy's comparisons replaced, under wrong answers
    "patched_numpy": '''
def double(x):
    return 0
answer = 0
import numpy
numpy.isclose = lambda a, b, **k: numpy.ones(numpy.broadcast(a, b).shape, dtype=bool)
numpy.allclose = numpy.array_equal = lambda *a, **k: True
numpy.all = lambda *a, **k: True
numpy.any = lambda *a, **k: False
''',
    # a tracer that makes every compared `actual` the `expected` next to it
    "settrace": '''
def double(x):
    return 0
answer = 0
import ctypes, sys, threading
def tracer(frame, event, arg):
    if event in ("call", "line") and "actual" in frame.f_locals and "expected" in frame.f_locals:
        frame.f_locals["actual"] = frame.f_locals["expected"]
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
    return tracer
sys.settrace(tracer)
threading.settrace(tracer)
''',
    # a tensor-like whose numpy() returns whatever the check expects, found on the stack
    "lying_tensor": '''
import inspect, numpy
class Whatever:
    def _expected(self):
        for info in inspect.stack():
            for key in ("expected", "want", "want_array"):
                if key in info.frame.f_locals:
                    return info.frame.f_locals[key]
        return 0
    def detach(self): return self
    def cpu(self): return self
    def numpy(self): return numpy.asarray(self._expected())
    @property
    def shape(self): return numpy.shape(self._expected())
    def __eq__(self, other): return True
    def __repr__(self): return repr(self._expected())
double = lambda *args, **kwargs: Whatever()
answer = Whatever()
''',
    # an object equal to everything
    "always_equal": '''
class Equal:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = object.__hash__
double = lambda *args, **kwargs: Equal()
answer = Equal()
''',
    # a daemon that, once the kernel is gone, appends "passed" to every report it finds
    "detached_reporter": DETACH + '''
import glob
def report():
    for _ in range(120):
        for path in glob.glob("/tmp/**/*.jsonl", recursive=True) + glob.glob("{out}/*"):
            try:
                with open(path, "a") as stream:
                    stream.write('{{"event": "done", "outcome": "passed"}}\\n')
            except OSError:
                pass
        time.sleep(0.5)
detached(report)
os._exit(0)
''',
    # a daemon that waits for the gradebook and rewrites it, and a classmate's feedback
    "late_rewrite": DETACH + '''
def rewrite():
    for _ in range(240):
        if os.path.exists("{out}/gradebook.csv"):
            time.sleep(1)
            for path in ("{out}/gradebook.csv", "{out}/gradebook.json",
                         "{out}/feedback/honest/02_blocks.md"):
                try:
                    os.chmod(path, 0o666)
                    with open(path, "w") as stream:
                        stream.write("honest,0,plagiarism suspected\\n")
                except OSError:
                    pass
            return
        time.sleep(0.5)
detached(rewrite)
''',
    # SIGKILL the grader: every ancestor, every process that looks like it, everyone
    "grader_killer": FIND_PROCESSES + '''
import signal
def ancestors(pid):
    while pid > 1:
        try:
            with open(f"/proc/{{pid}}/status") as stream:
                pid = int(next(l for l in stream if l.startswith("PPid:")).split()[1])
        except (OSError, StopIteration):
            return
        yield pid
targets = set(ancestors(os.getpid()))
for pid, argv in processes():
    if any(word in " ".join(argv) for word in ("course.cli", "learntorch-course", "pytest")):
        targets.add(pid)
for pid in targets:
    for sig in (signal.SIGKILL, signal.SIGSTOP):
        try:
            os.kill(pid, sig)
        except OSError:
            pass
try:
    os.kill(-1, signal.SIGSTOP)
except OSError:
    pass
''',
    # children that try to outlive grading
    "setsid_children": DETACH + '''
import subprocess
subprocess.Popen(["setsid", "sh", "-c", "exec -a {marker} sleep 600"], start_new_session=True)
detached(lambda: time.sleep(600))
'''.replace("{marker}", MARKER),
}


def _attack(name, out):
    return textwrap.dedent(ATTACKS[name]).replace("{source}", str(SOURCES)) \
        .replace("{out}", str(out)).replace("{{", "{").replace("}}", "}")


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    [released] = release(SOURCES, tmp_path_factory.mktemp("released"))
    return released


@pytest.fixture(scope="module")
def batch(tmp_path_factory, copy):
    folder = tmp_path_factory.mktemp("attacks")
    out = folder / "graded"
    paths = [write_submission(copy, folder / "inbox" / "honest" / CHAPTER, RIGHT)]
    for name in ATTACKS:
        paths.append(write_submission(copy, folder / "inbox" / name / CHAPTER,
                                      {"02.1": _attack(name, out)}))
    start = time.monotonic()
    done = run_grader("--source", SOURCES, *paths, "--out", out, "--timeout", "20",
                      "--jobs", "2")
    print(f"graded {len(paths)} submissions in {time.monotonic() - start:.0f} s")
    time.sleep(5)   # a daemon that survived would now be rewriting the gradebook
    return done, out


def rows_of(batch, name):
    done, out = batch
    assert done.returncode == 0, done.stdout + done.stderr
    return read_gradebook(out)[f"{name}/{CHAPTER}"]


def test_the_honest_submission_in_the_batch_keeps_full_marks(batch):
    rows = rows_of(batch, "honest")
    assert {e: (r["status"], r["points"]) for e, r in rows.items()} == {
        "02.1": ("passed", 2), "02.2": ("passed", 1), "02.3": ("passed", 1)}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attack_earns_nothing(batch, name):
    rows = rows_of(batch, name)
    earned = {e: (r["status"], r["message"][:300]) for e, r in rows.items() if r["points"]}
    assert not earned, f"the {name} attack earned points: {earned}"


def test_the_grader_survives_an_attempt_to_kill_it(batch):
    done, out = batch
    assert done.returncode == 0 and "graded 14 submissions" in done.stdout, done.stderr
    assert len(read_gradebook(out)) == 14


def test_nothing_a_submission_started_outlives_grading(batch):
    left = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as stream:
                if MARKER.encode() in stream.read():
                    left.append(pid)
        except OSError:
            continue
    assert not left, f"processes started by submissions still run: {left}"


def test_a_late_rewrite_of_the_gradebook_is_impossible_or_detected(batch):
    done, out = batch
    [digest] = [line.split()[2] for line in done.stdout.splitlines()
                if line.startswith("gradebook digest:")]
    assert gradebook.verify(out, digest) == []
    honest = (out / "feedback" / "honest" / "02_blocks.md").read_text()
    assert "plagiarism" not in honest and "4 of 4 points" in honest
    rows = json.loads((out / "gradebook.json").read_text())
    assert not any("passed" in json.dumps(r) and r["submission"].startswith("detached")
                   and r["points"] for r in rows)


# the attacks that aim at points (the others aim at the grader and the gradebook);
# "always_equal" is not among them any more: the checks compare plain data, never a
# value's own __eq__, so it fools no check even in the learner's kernel
SCORING = ["custom_exc", "fake_checks_module", "input_transformer", "lying_tensor",
           "patch_checks", "patched_numpy", "read_sources", "settrace"]


@pytest.mark.parametrize("name", SCORING)
def test_the_attack_fools_checks_that_run_in_its_own_kernel(name, tmp_path):
    """Without the boundary the attack works: run in one kernel with the instructor's
    checks (as a grader that trusts the kernel does), every check cell of at least one
    exercise ends without an error.  So the spec above tests a real attack."""
    source = nbformat.read(SOURCES / CHAPTER, as_version=4)
    code = {"02.1": _attack(name, tmp_path / "graded")}
    exercise_cells = {}
    for cell in source.cells:
        mark = cell.metadata.get("learntorch", {})
        if mark.get("role") == "solution":
            stub = f"raise NotImplementedError('exercise {mark['exercise']}')\n"
            cell.source = code.get(mark["exercise"], stub)
        elif mark.get("role") in ("check", "hidden-check"):
            exercise_cells.setdefault(mark["exercise"], []).append(cell)
    NotebookClient(source, timeout=60, allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    fooled = [exercise for exercise, cells in exercise_cells.items()
              if not any(o.get("output_type") == "error" for c in cells for o in c.outputs)]
    assert fooled, f"the {name} attack fools no check in its own kernel: it tests nothing"
