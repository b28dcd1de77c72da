"""What an instructor trying the README ran into: each is now handled, and said.

- pointing --source at the learner copies (chapters/) by mistake;
- a notebook whose cell metadata a tool stripped;
- a file whose name says one chapter and whose metadata another;
- feedback files of two submissions that would have had the same name;
- a total per student (the gradebook's student_points column, see test_course_grade.py)
  and cells numbered as in the learner's copy (ditto).
"""
import json
import shutil

from course_fixtures import RIGHT, TINY_SOURCES, read_gradebook, run_grader, write_submission
from course import gradebook
from course.grade import grade
from course.release import release


def test_learner_copies_given_as_sources_are_recognised(tmp_path, learner_copy):
    released = tmp_path / "chapters"
    release(TINY_SOURCES, released)
    path = write_submission(learner_copy, tmp_path / "alice" / "01_tiny.ipynb", RIGHT)
    done = run_grader("--source", released, path, "--out", tmp_path / "graded")
    assert done.returncode == 2
    assert "this looks like a learner copy" in done.stderr
    assert "--source must be the folder of instructor sources" in done.stderr


def test_a_notebook_that_lost_its_cell_metadata_is_matched_by_cell_id(tmp_path,
                                                                      learner_copy):
    def strip(notebook):
        for cell in notebook["cells"]:
            cell["metadata"] = {}
    path = write_submission(learner_copy, tmp_path / "alice" / "01_tiny.ipynb", edit=strip)
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:   # the solutions, written into the stripped cells
        if cell["id"] == "ex1-solution":
            cell["source"] = RIGHT["01.1"]
        elif cell["id"] == "ex2-solution":
            cell["source"] = RIGHT["01.2"]
        elif cell["id"] == "ex3-solution":
            cell["source"] = RIGHT["01.3"]
    path.write_text(json.dumps(notebook))
    [graded] = grade(TINY_SOURCES, [path], timeout=20, workdir=tmp_path)
    assert [(r.exercise, r.status, r.points) for r in graded.rows] == [
        ("01.1", "passed", 2), ("01.2", "passed", 1), ("01.3", "passed", 1)]
    assert all("cell metadata was lost" in r.message and "cell ids" in r.message
               for r in graded.rows)


def test_a_file_named_for_another_chapter_is_graded_by_its_metadata_with_a_warning(
        tmp_path, learner_copy):
    sources = tmp_path / "sources"
    sources.mkdir()
    shutil.copy(TINY_SOURCES / "01_tiny.ipynb", sources / "01_tiny.ipynb")
    shutil.copy(TINY_SOURCES / "01_tiny.ipynb", sources / "02_twin.ipynb")
    path = write_submission(learner_copy, tmp_path / "alice" / "02_twin.ipynb", RIGHT)
    out = tmp_path / "graded"
    done = run_grader("--source", sources, path, "--out", out, "--timeout", "20")
    assert done.returncode == 0, done.stderr
    assert ("warning: 02_twin.ipynb: the file name '02_twin.ipynb' says chapter 02_twin but "
            "the notebook's metadata says 01_tiny; graded as 01_tiny") in done.stdout
    [rows] = read_gradebook(out).values()
    assert {r["chapter"] for r in rows.values()} == {"01_tiny"}
    assert all("graded as 01_tiny" in r["message"] for r in rows.values())


def test_feedback_files_never_share_a_name(tmp_path):
    names = ["alice/01_tiny.ipynb", "alice/01_tiny", "Alice/01_tiny.ipynb",
             "alice__01_tiny.ipynb", "alice/01_tiny (2).ipynb"]
    paths = gradebook.feedback_paths(tmp_path, names)
    assert len({str(p).lower() for p in paths.values()}) == len(names)
    assert paths["alice/01_tiny.ipynb"] == tmp_path / "feedback" / "alice" / "01_tiny.md"
    assert paths["alice__01_tiny.ipynb"] == tmp_path / "feedback" / "alice__01_tiny.md"
