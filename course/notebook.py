"""Notebooks as the course tooling sees them: plain JSON, exercise marks in cell metadata.

A chapter source marks its exercise cells in their metadata (the format is described
in ``course/checks.py``)::

    {"learntorch": {"exercise": "02.1", "role": "solution", "points": 2, "hint": "..."}}

and a solution cell holds its answer between a line ``### BEGIN SOLUTION`` and a line
``### END SOLUTION``.  ``read_source`` reads a chapter source and refuses one whose
marks are inconsistent (an unmatched marker, a solution cell without an exercise id,
a marker outside a solution cell, an exercise without checks, ...), with a message
naming the notebook and the cell: a mistake there would leak a solution to learners
or make an exercise ungradable.

Notebooks are read and written as plain JSON (not through nbformat's upgrade
machinery, which may invent random cell ids): writing is deterministic, so a
release run twice gives the same bytes.
"""
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
ROLES = ("solution", "check", "hidden-check")
# a line that looks like a marker but is not exactly one (a typo would leak a solution)
_NEAR_MARKER = re.compile(r"^\s*#+\s*(BEGIN|END)\s+SOLUTION", re.I)


class SourceError(ValueError):
    """A chapter source whose exercise marks are inconsistent."""


@dataclass
class Exercise:
    """One exercise of a chapter source: its cells, by index in ``notebook["cells"]``."""
    id: str
    points: float = 1
    hint: str = ""
    solution: int = None
    checks: list = field(default_factory=list)          # visible check cells
    hidden_checks: list = field(default_factory=list)   # instructor-only check cells


def read_notebook(path):
    """The notebook at ``path`` as a dict, every cell's source one string."""
    path = Path(path)
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a readable notebook ({error})") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ValueError(f"{path}: not a notebook (no list of cells)")
    for cell in notebook["cells"]:
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
        cell.setdefault("source", "")
        cell.setdefault("metadata", {})
    return notebook


def dumps(notebook):
    """The bytes a notebook is stored as: Jupyter's own layout (sorted keys, one-space
    indent, sources as lists of lines), so saving it in JupyterLab changes nothing."""
    stored = dict(notebook)
    stored["cells"] = [dict(cell, source=cell["source"].splitlines(keepends=True))
                       for cell in notebook["cells"]]
    return json.dumps(stored, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_notebook(notebook, path):
    Path(path).write_text(dumps(notebook), encoding="utf-8")


def marks(cell):
    """The ``learntorch`` metadata of a cell (``{}`` when it is not an exercise cell)."""
    value = cell.get("metadata", {}).get("learntorch", {})
    return value if isinstance(value, dict) else {}


def where(path, index, cell):
    """How an error names a cell: the notebook, the cell's position and id, its first line."""
    first = cell.get("source", "").strip().splitlines()[:1]
    shown = f": {first[0][:60]!r}" if first else " (empty)"
    cell_id = f" (id {cell['id']})" if cell.get("id") else ""
    return f"{path}, cell {index + 1}{cell_id}{shown}"


def solution_regions(source, place="this cell"):
    """The ``(begin, end)`` line numbers (0-based, inclusive) of each solution region.

    Raises SourceError for an END without a BEGIN, a BEGIN inside a region, a BEGIN
    never closed, or a line that looks like a marker but is not exactly one.
    """
    regions, begin = [], None
    for number, line in enumerate(source.splitlines()):
        text = line.strip()
        if text == BEGIN:
            if begin is not None:
                raise SourceError(f"{place}: line {number + 1} opens a second {BEGIN!r} "
                                  f"before the one on line {begin + 1} is closed with {END!r}")
            begin = number
        elif text == END:
            if begin is None:
                raise SourceError(f"{place}: line {number + 1} has {END!r} without a "
                                  f"{BEGIN!r} before it")
            regions.append((begin, number))
            begin = None
        elif _NEAR_MARKER.match(line):
            raise SourceError(f"{place}: line {number + 1} ({text!r}) looks like a solution "
                              f"marker but is not exactly {BEGIN!r} or {END!r} on a line of "
                              f"its own")
    if begin is not None:
        raise SourceError(f"{place}: {BEGIN!r} on line {begin + 1} is never closed: add a "
                          f"line {END!r} after the solution")
    return regions


def exercises(notebook, path="notebook"):
    """The exercises of a chapter source, in order, after checking that its marks are
    consistent (raises SourceError naming the notebook and the cell otherwise)."""
    found = {}
    for index, cell in enumerate(notebook["cells"]):
        mark, place = marks(cell), where(path, index, cell)
        role, exercise_id = mark.get("role"), mark.get("exercise")
        if cell.get("cell_type") != "code" or role != "solution":
            if BEGIN in cell["source"] or END in cell["source"]:
                raise SourceError(f"{place}: solution markers in a cell that is not a "
                                  f"solution cell; mark it with metadata "
                                  f'{{"learntorch": {{"exercise": "NN.k", "role": "solution"}}}}')
        if not mark:
            continue
        if role not in ROLES:
            raise SourceError(f"{place}: learntorch role {role!r} is not one of {ROLES}")
        if cell.get("cell_type") != "code":
            raise SourceError(f"{place}: a {cell.get('cell_type')} cell cannot be an exercise "
                              f"{role}; only code cells can")
        if not isinstance(exercise_id, str) or not exercise_id.strip():
            raise SourceError(f"{place}: a {role} cell without an exercise id; add "
                              f'"exercise": "NN.k" to its learntorch metadata')
        exercise = found.setdefault(exercise_id, Exercise(exercise_id))
        if role == "solution":
            if exercise.solution is not None:
                raise SourceError(f"{place}: exercise {exercise_id} has a second solution cell "
                                  f"(the first is cell {exercise.solution + 1}); an exercise "
                                  f"has exactly one")
            if exercise.checks or exercise.hidden_checks:
                raise SourceError(f"{place}: the solution cell of exercise {exercise_id} comes "
                                  f"after one of its checks; put the checks after it")
            if not solution_regions(cell["source"], place):
                raise SourceError(f"{place}: solution cell without a {BEGIN!r} ... {END!r} "
                                  f"region: the learner copy would show the whole answer")
            points = mark.get("points", 1)
            if isinstance(points, bool) or not isinstance(points, (int, float)) or points < 0:
                raise SourceError(f"{place}: points must be a number >= 0, not {points!r}")
            exercise.solution, exercise.points = index, points
            exercise.hint = str(mark.get("hint", ""))
        else:
            (exercise.checks if role == "check" else exercise.hidden_checks).append(index)
    for exercise in found.values():
        if exercise.solution is None:
            raise SourceError(f"{path}: exercise {exercise.id} has checks but no solution cell")
        if not exercise.checks and not exercise.hidden_checks:
            raise SourceError(f"{path}: exercise {exercise.id} has no check or hidden-check "
                              f"cell, so it could never be graded")
    return list(found.values())


def read_source(path):
    """A chapter source and its exercises; raises SourceError when its marks are wrong."""
    notebook = read_notebook(path)
    ids = [cell.get("id") for cell in notebook["cells"] if cell.get("id")]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise SourceError(f"{path}: cell ids {duplicated} are used twice; ids must be unique")
    return notebook, exercises(notebook, path)


def chapter_sources(source_dir):
    """The chapter sources of a folder: ``NN_topic.ipynb`` files, in reading order."""
    return sorted(p for p in Path(source_dir).glob("*.ipynb") if re.match(r"\d\d_", p.name))
