"""The learner copy of a chapter: solutions replaced by stubs, hidden checks gone.

``release_notebook`` turns one instructor source into what learners open:

- each ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region becomes a stub, at the
  region's indentation, that raises ``NotImplementedError`` naming the exercise and
  its hint (so running it says what to do, and every check fails until it is done);
- hidden-check cells are removed (no trace of them is left);
- check cells are locked in JupyterLab (not editable, not deletable) -- grading
  takes checks from the source anyway, so this only prevents accidents;
- outputs and execution counts are cleared; cell ids and all other metadata stay,
  so grading can match a submission's cells to the source by exercise id;
- the notebook metadata records the chapter (``{"learntorch": {"chapter": "02_autograd"}}``),
  which is how ``grade`` finds the source of a renamed submission.

The result depends only on the source's content: releasing twice gives the same bytes.
"""
from pathlib import Path

from .notebook import dumps, exercises, marks, read_source, chapter_sources, solution_regions

STUB_COMMENT = "# YOUR CODE HERE (exercise {id})"


def stub_lines(exercise_id, hint, indent=""):
    """The lines that replace a solution region."""
    message = f"exercise {exercise_id}: " + (hint or "replace this line with your code")
    return [indent + STUB_COMMENT.format(id=exercise_id),
            indent + f"raise NotImplementedError({message!r})"]


def stub_solution(source, exercise_id, hint=""):
    """``source`` with every solution region replaced by the stub."""
    lines = source.splitlines()
    for begin, end in reversed(solution_regions(source)):
        indent = lines[begin][:len(lines[begin]) - len(lines[begin].lstrip())]
        lines[begin:end + 1] = stub_lines(exercise_id, hint, indent)
    return "\n".join(lines) + ("\n" if source.endswith("\n") else "")


def cleared(cell):
    """A copy of ``cell`` without outputs, execution count or run timings."""
    cell = dict(cell, metadata=dict(cell.get("metadata", {})))
    cell["metadata"].pop("execution", None)   # JupyterLab's run timestamps
    if cell.get("cell_type") == "code":
        cell["outputs"], cell["execution_count"] = [], None
    return cell


def release_notebook(notebook, chapter, path="notebook"):
    """The learner copy of the chapter source ``notebook`` (a dict, not modified)."""
    hints = {exercise.id: exercise.hint for exercise in exercises(notebook, path)}
    cells = []
    for cell in notebook["cells"]:
        mark = marks(cell)
        role = mark.get("role")
        if role == "hidden-check":
            continue
        cell = cleared(cell)
        if role == "solution":
            cell["source"] = stub_solution(cell["source"], mark["exercise"],
                                           hints[mark["exercise"]])
        elif role == "check":
            cell["metadata"].update(editable=False, deletable=False)
        cells.append(cell)
    metadata = dict(notebook.get("metadata", {}))
    metadata["learntorch"] = dict(metadata.get("learntorch") or {}, chapter=chapter)
    return dict(notebook, cells=cells, metadata=metadata)


def release(source_dir, out_dir):
    """Write the learner copy of every chapter source of ``source_dir`` into ``out_dir``.

    Every source is checked before anything is written, so a bad source leaves
    ``out_dir`` as it was.  Returns the paths written.
    """
    sources = chapter_sources(source_dir)
    if not sources:
        raise FileNotFoundError(f"{source_dir}: no chapter sources (NN_topic.ipynb files)")
    copies = {}
    for path in sources:
        notebook, _ = read_source(path)
        copies[Path(out_dir) / path.name] = dumps(release_notebook(notebook, path.stem, path))
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for target, text in copies.items():
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    return list(copies)
