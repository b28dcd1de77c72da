"""Reading a submitted notebook, whatever it turns out to be.

A submission is whatever a learner handed in: a notebook, a notebook some tool
mangled, or not a notebook at all.  ``read`` accepts exactly the Jupyter notebooks
of format 4 whose every field the grader uses has the right type, and refuses
anything else with one sentence that names what is wrong (``SubmissionError``);
grading then gives that submission one ``error`` row and goes on with the batch.

``chapter_of`` finds the chapter (the notebook's metadata, else the file name's
``NN_``), ``solutions_of`` the learner's solution cells (by the exercise id in their
metadata, else -- for a notebook whose cell metadata was lost -- by cell id).
"""
import json
import re
from pathlib import Path

MAX_BYTES = 50 * 1024 * 1024
_CELL_TYPES = ("code", "markdown", "raw")


class SubmissionError(ValueError):
    """Not a notebook the grader can read; the message says why."""


def _source(value, where):
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "".join(value)
    raise SubmissionError(f"its {where} has a source that is {type(value).__name__}, not text "
                          f"(a string or a list of strings)")


def read(path):
    """The notebook at ``path`` as a dict (every cell's source one string, every
    metadata a dict); raises SubmissionError naming what is wrong."""
    path = Path(path)
    if path.is_dir():
        raise SubmissionError("it is a folder, not a notebook file")
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise SubmissionError(f"it is {size // (1024 * 1024)} MB; a notebook to grade may "
                                  f"have at most {MAX_BYTES // (1024 * 1024)} MB (clear its "
                                  f"outputs)")
        data = path.read_bytes()
    except OSError as error:
        raise SubmissionError(f"it cannot be read ({error.strerror})") from None
    if not data.strip():
        raise SubmissionError("it is empty (0 bytes)" if not data else
                              "it holds only white space, not a notebook")
    try:
        notebook = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise SubmissionError("it is not UTF-8 text, so not a notebook") from None
    except (json.JSONDecodeError, RecursionError) as error:
        raise SubmissionError(f"it is not a readable notebook (not JSON: "
                              f"{str(error)[:120]})") from None
    if not isinstance(notebook, dict):
        raise SubmissionError(f"it is JSON but not a notebook (a {type(notebook).__name__}, "
                              f"not an object)")
    if notebook.get("nbformat") != 4 or isinstance(notebook.get("nbformat"), bool):
        found = notebook.get("nbformat", "none")
        raise SubmissionError(f"it has notebook format {str(found)[:20]!s}, not 4: save it from "
                              f"JupyterLab or Jupyter Notebook (format 4)")
    metadata = notebook.get("metadata", {})
    if not isinstance(metadata, dict):
        raise SubmissionError(f"it has notebook metadata that is {type(metadata).__name__}, "
                              f"not an object")
    notebook["metadata"] = metadata
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise SubmissionError("it has no list of cells")
    for number, cell in enumerate(cells, start=1):
        where = f"cell {number}"
        if not isinstance(cell, dict):
            raise SubmissionError(f"its {where} is {type(cell).__name__}, not a cell (an object)")
        if cell.get("cell_type") not in _CELL_TYPES:
            raise SubmissionError(f"its {where} has cell_type {str(cell.get('cell_type'))[:30]}, "
                                  f"not one of {', '.join(_CELL_TYPES)}")
        cell["source"] = _source(cell.get("source", ""), where)
        cell_metadata = cell.get("metadata", {})
        if not isinstance(cell_metadata, dict):
            raise SubmissionError(f"its {where} has metadata that is "
                                  f"{type(cell_metadata).__name__}, not an object")
        cell["metadata"] = cell_metadata
        mark = cell_metadata.get("learntorch")
        if mark is not None:
            if not isinstance(mark, dict):
                raise SubmissionError(f"its {where} has learntorch metadata that is "
                                      f"{type(mark).__name__}, not an object")
            for key in ("exercise", "role"):
                if key in mark and not isinstance(mark[key], str):
                    raise SubmissionError(f"its {where} has a learntorch {key} that is "
                                          f"{type(mark[key]).__name__}, not a string")
        if "id" in cell and not isinstance(cell["id"], str):
            raise SubmissionError(f"its {where} has an id that is {type(cell['id']).__name__}, "
                                  f"not a string")
    return notebook


def chapter_of(notebook, path, plans):
    """``(plan, note)``: the chapter of a submission, by its metadata or else by its file
    name, and a note for the instructor when the two disagree (None otherwise)."""
    mark = notebook["metadata"].get("learntorch")
    named = mark.get("chapter") if isinstance(mark, dict) else None
    named = named if isinstance(named, str) else None

    def by_number(text):
        number = re.match(r"(\d\d)(_|$)", text or "")
        found = [plan for stem, plan in plans.items()
                 if number and stem.startswith(number.group(1) + "_")]
        return found[0] if len(found) == 1 else None

    from_metadata = plans.get(named) or by_number(named)
    from_name = by_number(Path(path).name)
    if from_metadata and from_name and from_metadata is not from_name:
        return from_metadata, (f"the file name {Path(path).name!r} says chapter "
                               f"{from_name.chapter} but the notebook's metadata says "
                               f"{from_metadata.chapter}; graded as {from_metadata.chapter}")
    if named and not from_metadata and from_name:
        return from_name, (f"the notebook's metadata names chapter {named[:40]!r}, which "
                           f"the sources do not have; graded as {from_name.chapter} (its "
                           f"file name)")
    return from_metadata or from_name, None


def solutions_of(notebook, plan):
    """``(solutions, problems, notes)``: the submission's solution cell source per
    exercise id; ``(status, message)`` per exercise whose solution cell is missing or
    duplicated; and notes for the instructor (cells matched by id)."""
    found = {}
    marked = False
    for cell in notebook["cells"]:
        mark = cell["metadata"].get("learntorch") or {}
        if mark:
            marked = True
        if mark.get("role") == "solution" and cell["cell_type"] == "code":
            found.setdefault(mark.get("exercise"), []).append(cell["source"])
    by_id = {cell.get("id"): cell for cell in notebook["cells"]
             if cell.get("id") and cell["cell_type"] == "code"}
    solutions, problems, notes = {}, {}, []
    for exercise in plan.exercises:
        copies = found.get(exercise.id, [])
        source_id = plan.cells[exercise.solution].get("id")
        if not copies and not marked and source_id in by_id:
            # the notebook lost its cell metadata (some tools strip it): the release
            # kept the source's cell ids, so the solution cell is still recognisable
            solutions[exercise.id] = by_id[source_id]["source"]
            notes.append(exercise.id)
        elif len(copies) == 1:
            solutions[exercise.id] = copies[0]
        elif not copies:
            problems[exercise.id] = (
                "missing", f"no solution cell for exercise {exercise.id} in the submission "
                           f"(deleted, or its metadata changed); graded as not attempted")
        else:
            problems[exercise.id] = (
                "duplicated", f"{len(copies)} solution cells for exercise {exercise.id} in the "
                              f"submission; keep exactly one (copying the cell copies its "
                              f"metadata); graded as not attempted")
    note = None
    if notes:
        note = (f"the notebook's cell metadata was lost, so its solution cells were found by "
                f"their cell ids (exercises {', '.join(notes)})")
    return solutions, problems, note
