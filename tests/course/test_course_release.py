"""learntorch-course release: learner copies with stubs, no hidden checks, no outputs,
stable ids, the same bytes every time; inconsistent sources are refused by name."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_fixtures import TINY_SOURCES
from course.notebook import SourceError
from course.release import release


def cells_by_id(path):
    return {cell["id"]: cell for cell in json.loads(path.read_text())["cells"]}


def test_solutions_become_stubs_that_name_the_exercise_and_the_hint(learner_copy):
    cells = cells_by_id(learner_copy)
    assert "".join(cells["ex1-solution"]["source"]) == (
        "def double(x):\n"
        "    # YOUR CODE HERE (exercise 01.1)\n"
        "    raise NotImplementedError('exercise 01.1: multiply x by 2')")
    assert "".join(cells["ex3-solution"]["source"]) == (
        "# YOUR CODE HERE (exercise 01.3)\n"
        "raise NotImplementedError('exercise 01.3: answer = 42')")
    text = learner_copy.read_text()
    assert "return 2 * x" not in text and "BEGIN SOLUTION" not in text


def test_hidden_checks_are_gone_and_everything_else_stays_in_order(learner_copy):
    source_ids = [c["id"] for c in json.loads((TINY_SOURCES / "01_tiny.ipynb").read_text())["cells"]]
    kept = list(cells_by_id(learner_copy))
    assert kept == [i for i in source_ids if i not in ("ex1-hidden", "ex2-hidden")]
    assert "double(21)" not in learner_copy.read_text()


def test_check_cells_are_locked_and_exercise_metadata_kept(learner_copy):
    cells = cells_by_id(learner_copy)
    assert cells["ex1-check"]["metadata"] == {
        "editable": False, "deletable": False,
        "learntorch": {"exercise": "01.1", "role": "check"}}
    assert cells["ex1-solution"]["metadata"]["learntorch"]["exercise"] == "01.1"
    assert json.loads(learner_copy.read_text())["metadata"]["learntorch"] == {"chapter": "01_tiny"}


def test_outputs_and_execution_counts_are_cleared(tmp_path):
    source = json.loads((TINY_SOURCES / "01_tiny.ipynb").read_text())
    for number, cell in enumerate(source["cells"]):
        if cell["cell_type"] == "code":
            cell["execution_count"] = number
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["42\n"]}]
            cell["metadata"]["execution"] = {"iopub.execute_input": "2024-01-01T00:00:00Z"}
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "01_tiny.ipynb").write_text(json.dumps(source))
    [copy] = release(tmp_path / "src", tmp_path / "out")
    for cell in json.loads(copy.read_text())["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
            assert "execution" not in cell["metadata"]


def test_release_is_byte_for_byte_deterministic(tmp_path, learner_copy):
    [again] = release(TINY_SOURCES, tmp_path)
    assert again.read_bytes() == learner_copy.read_bytes()
    before = again.stat().st_mtime_ns
    release(TINY_SOURCES, tmp_path)  # unchanged output is not even rewritten
    assert again.stat().st_mtime_ns == before


def test_the_learner_copy_is_a_valid_notebook(learner_copy):
    nbformat = pytest.importorskip("nbformat")
    nbformat.validate(nbformat.read(str(learner_copy), as_version=4))


def broken_source(tmp_path, cell_id, change):
    """A copy of the fixture chapter with ``change(cell)`` applied to one cell."""
    source = json.loads((TINY_SOURCES / "01_tiny.ipynb").read_text())
    change(next(c for c in source["cells"] if c["id"] == cell_id))
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "01_tiny.ipynb").write_text(json.dumps(source))
    return folder


def set_source(text):
    return lambda cell: cell.update(source=text)


@pytest.mark.parametrize("cell_id, change, says", [
    ("ex1-solution", set_source("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"),
     "'### BEGIN SOLUTION' on line 2 is never closed"),
    ("ex1-solution", set_source("def double(x):\n    return 2 * x\n    ### END SOLUTION\n"),
     "line 3 has '### END SOLUTION' without a '### BEGIN SOLUTION'"),
    ("ex1-solution", set_source("### BEGIN SOLUTION\n### BEGIN SOLUTION\nx = 1\n"
                                "### END SOLUTION\n"), "opens a second"),
    ("ex1-solution", set_source("def double(x):\n    ## BEGIN SOLUTION\n    return 2 * x\n"
                                "    ### END SOLUTION\n"), "looks like a solution marker"),
    ("ex1-solution", lambda cell: cell["metadata"]["learntorch"].pop("exercise"),
     "a solution cell without an exercise id"),
    ("ex1-solution", set_source("def double(x):\n    return 2 * x\n"),
     "solution cell without a '### BEGIN SOLUTION'"),
    ("setup", set_source("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n"),
     "solution markers in a cell that is not a solution cell"),
    ("ex1-check", lambda cell: cell["metadata"]["learntorch"].update(role="answer"),
     "role 'answer' is not one of"),
    ("ex3-check", lambda cell: cell["metadata"]["learntorch"].update(role="solution"),
     "exercise 01.3 has a second solution cell"),
    ("ex3-check", lambda cell: cell["metadata"].pop("learntorch"),
     "exercise 01.3 has no check or hidden-check cell"),
    ("ex1-solution", lambda cell: cell["metadata"]["learntorch"].update(points=-1),
     "points must be a number >= 0"),
])
def test_an_inconsistent_source_is_refused_naming_notebook_and_cell(tmp_path, cell_id, change,
                                                                   says):
    source = broken_source(tmp_path, cell_id, change)
    with pytest.raises(SourceError) as info:
        release(source, tmp_path / "out")
    message = str(info.value)
    assert says in message and "01_tiny.ipynb" in message
    assert not (tmp_path / "out").exists()  # nothing written


def test_refusals_name_the_cell_by_position_and_id(tmp_path):
    source = broken_source(tmp_path, "ex1-solution",
                           lambda cell: cell["metadata"]["learntorch"].pop("exercise"))
    with pytest.raises(SourceError, match=r"cell 4 \(id ex1-solution\): 'def double\(x\):'"):
        release(source, tmp_path / "out")


def test_an_empty_source_folder_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no chapter sources"):
        release(tmp_path, tmp_path / "out")


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "course.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_the_command_releases_and_reports_errors_with_exit_code_2(tmp_path):
    done = run_cli("release", TINY_SOURCES, tmp_path / "out")
    assert done.returncode == 0 and "wrote 1 learner copies" in done.stdout
    assert (tmp_path / "out" / "01_tiny.ipynb").exists()
    bad = broken_source(tmp_path, "ex1-solution",
                        set_source("def double(x):\n    ### BEGIN SOLUTION\n"))
    refused = run_cli("release", bad, tmp_path / "out2")
    assert refused.returncode == 2 and "never closed" in refused.stderr


@pytest.mark.parametrize("args, says", [
    ((), ["release", "grade", "### BEGIN SOLUTION", "hidden-check"]),
    (("release",), ["SOURCE_DIR", "OUT_DIR", "NotImplementedError", "deterministic"]),
    (("grade",), ["--source", "--out", "--timeout", "--jobs", "gradebook.csv",
                  "hidden checks", "kills the kernel", "sandbox", "isolation",
                  "--notebook-timeout", "--memory", "SHA256SUMS"]),
    (("verify",), ["SHA256SUMS", "--digest"]),
])
def test_help_explains_release_and_grade(args, says):
    done = run_cli(*args, "--help")
    assert done.returncode == 0
    for words in says:
        assert words in done.stdout, f"`learntorch-course {' '.join(args)} --help` lacks {words!r}"


def test_the_installed_command_exists():
    command = shutil.which("learntorch-course", path=str(Path(sys.executable).parent))
    assert command, "learntorch-course is not installed next to this Python"
    assert subprocess.run([command, "--help"], capture_output=True).returncode == 0
