"""A submission's kernel runs under limits, and each limit it hits is its own row.

All the greedy submissions are graded in one batch, beside an honest one that must
keep its full marks, with limits small enough to reach in a moment.  A limit hit in
one exercise costs that exercise only: the others are still graded.
"""
import pytest

from course_fixtures import RIGHT, TINY_SOURCES, write_submission
from course.grade import grade
from course.grading.sandbox import Limits

# CPU time is counted whatever the machine's load; the cell limit is generous so that
# four spinning threads on a busy machine reach the CPU limit first
LIMITS = Limits(memory_mb=2048, cpu_seconds=8, processes=64, open_files=128,
                file_size_mb=8, disk_mb=32, output_mb=4)

GREEDY = {
    # name: (the 01.1 solution cell, the status it must get)
    "prints_200_mb": ("for _ in range(200):\n    print('x' * 1_000_000)\n", "output-limit"),
    "allocates_3_gb": ("import numpy\nbig = numpy.ones(3 * 1024 ** 3 // 8)\n",
                       "memory-limit"),
    "starts_1000_threads": ("import threading, time\n"
                            "for _ in range(1000):\n"
                            "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n",
                            "process-limit"),
    "forks_1000_processes": ("import os, time\n"
                             "for _ in range(1000):\n"
                             "    if os.fork() == 0:\n"
                             "        time.sleep(60)\n"
                             "        os._exit(0)\n", "process-limit"),
    "opens_1000_files": ("files = [open('/dev/null') for _ in range(1000)]\n", "file-limit"),
    "writes_a_20_mb_file": ("with open('big.bin', 'wb') as f:\n"
                            "    f.write(b'x' * 20 * 1024 * 1024)\n", "output-limit"),
    "fills_its_disk": ("for n in range(10):\n"
                       "    with open(f'part{n}.bin', 'wb') as f:\n"
                       "        f.write(b'x' * 6 * 1024 * 1024)\n", "output-limit"),
    "burns_cpu_in_threads": ("import threading\n"
                             "def spin():\n"
                             "    while True:\n"
                             "        pass\n"
                             "for _ in range(4):\n"
                             "    threading.Thread(target=spin, daemon=True).start()\n"
                             "import time\n"
                             "time.sleep(600)\n", "cpu-limit"),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory, learner_copy):
    folder = tmp_path_factory.mktemp("limits")
    paths = [write_submission(learner_copy, folder / "honest" / "01_tiny.ipynb", RIGHT)]
    for name, (code, _) in GREEDY.items():
        paths.append(write_submission(learner_copy, folder / name / "01_tiny.ipynb",
                                      {**RIGHT, "01.1": code}))
    results = grade(TINY_SOURCES, paths, timeout=120, jobs=2, workdir=folder, limits=LIMITS)
    return {s.path.parent.name: s for s in results}


def test_the_honest_submission_in_the_batch_keeps_full_marks(graded):
    assert [(r.exercise, r.status, r.points) for r in graded["honest"].rows] == [
        ("01.1", "passed", 2), ("01.2", "passed", 1), ("01.3", "passed", 1)]


@pytest.mark.parametrize("name", sorted(GREEDY))
def test_a_limit_hit_is_its_own_row_and_costs_only_its_exercise(graded, name):
    rows = {r.exercise: r for r in graded[name].rows}
    assert (rows["01.1"].status, rows["01.1"].points) == (GREEDY[name][1], 0), \
        rows["01.1"].message
    assert [(rows[e].status, rows[e].points) for e in ("01.2", "01.3")] == [
        ("passed", 1), ("passed", 1)], [rows[e].message for e in ("01.2", "01.3")]


def test_the_limit_row_names_the_limit_and_its_size(graded):
    def message(name):
        return next(r.message for r in graded[name].rows if r.exercise == "01.1")
    assert "4 MB" in message("prints_200_mb")
    assert "2048 MB of memory" in message("allocates_3_gb")
    assert "64 processes or threads" in message("starts_1000_threads")
    assert "128 files" in message("opens_1000_files")
    assert "8 s of CPU time" in message("burns_cpu_in_threads")


def test_the_whole_notebook_has_a_time_limit(tmp_path, learner_copy):
    # no cell reaches the one-cell limit (100 s); the notebook's 25 s run out in 01.2
    slow = {**RIGHT, "01.2": "import time\ntime.sleep(200)\n" + RIGHT["01.2"]}
    path = write_submission(learner_copy, tmp_path / "slow" / "01_tiny.ipynb", slow)
    [result] = grade(TINY_SOURCES, [path], timeout=100, notebook_timeout=25,
                     workdir=tmp_path)
    statuses = {r.exercise: (r.status, r.points) for r in result.rows}
    assert statuses == {"01.1": ("passed", 2), "01.2": ("timeout", 0),
                        "01.3": ("not-run", 0)}, [r.message for r in result.rows]
    assert "the whole notebook ran past its 25 s limit" in result.rows[1].message
