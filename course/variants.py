"""Learner variants: does each exercise's visible check tell right from wrong?

Beside each instructor source ``course/solutions/NN_topic.ipynb`` lies its variant
specification, ``course/solutions/variants/NN_topic.py``: for every exercise, solutions
a learner might write, each declared right or wrong::

    from course.variants import correct, mistake

    VARIANTS = {
        "04.1": [
            correct("the max of each row, picked with gather", '''
                def stable_cross_entropy(logits, target):
                    ...
            '''),
            mistake("calls F.cross_entropy", '''
                def stable_cross_entropy(logits, target):
                    return F.cross_entropy(logits, target)
            ''', feedback=["F.cross_entropy", "rules out"]),
        ],
    }

* a ``correct`` variant is another right answer, written differently from the
  instructor's (another formula, another API, another style): the exercise's visible
  check must pass it (print ``✓ 04.1 passed``);
* ``edited(source, (old, new), ...)`` writes a variant as a change of another (a right
  answer with the one wrong line a mistake is about);
* a ``mistake`` is a wrong answer the text warns about, or a common one: the visible
  check must fail it with an ``ExerciseCheckFailed`` whose message contains every
  string of ``feedback`` (case does not matter) -- words that name the mistake, so the
  learner knows what to fix.  ``raises=`` names another exception when the engine's own
  error is the feedback (an in-place change of a leaf that requires grad, say).

The source of a variant is the whole solution cell as the learner leaves it (the
stub's body replaced), dedented.  Every exercise has at least two correct variants
and one mistake; the tests (tests/course/test_course_variants.py) hold the course to it.

How a chapter is tried (``run_chapter``): its code cells run in order in one process
(course/cells.py), as far as the first exercise; there each variant runs on a copy of
the namespace -- its solution cell, then the exercise's visible check cells -- with the
random generators put back as they were before each; then the instructor's solution and
its checks run in the chapter's own namespace, and the chapter goes on.  Hidden checks
never run here: this is about what a learner sees.

    python -m course.variants course/solutions/04_losses_optimizers.ipynb
"""
import argparse
import importlib.util
import json
import random
import sys
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .cells import CellRunner
from .notebook import marks, read_source

VARIANT_DIR = "variants"
MIN_CORRECT, MIN_MISTAKES = 2, 1
CELL_SECONDS = 300


@dataclass(frozen=True)
class Variant:
    """One way a learner might solve an exercise: ``kind`` is "correct" or "mistake"."""
    kind: str
    title: str
    source: str
    feedback: tuple = ()
    raises: str = "ExerciseCheckFailed"


def correct(title, source):
    """A right answer written differently: the visible check must pass it."""
    return Variant("correct", title, textwrap.dedent(source).strip("\n") + "\n")


def mistake(title, source, *, feedback, raises="ExerciseCheckFailed"):
    """A wrong answer: the visible check must fail it, saying every string of ``feedback``."""
    if isinstance(feedback, str):
        feedback = [feedback]
    if not feedback:
        raise ValueError(f"mistake {title!r}: give the words its feedback must contain")
    return Variant("mistake", title, textwrap.dedent(source).strip("\n") + "\n",
                   tuple(feedback), raises)


def edited(source, *changes):
    """``source`` (a variant's solution) with each ``(old, new)`` change made once.

    A mistake is often a right answer with one line wrong; written as an edit of that
    answer, the spec shows the one line a learner got wrong instead of a near copy of
    the whole cell.  Each ``old`` must stand exactly once in the source, so a spec
    whose base answer changed fails loudly instead of testing something else.
    """
    text = source
    for old, new in changes:
        count = text.count(old)
        if count != 1:
            raise ValueError(f"edited(): {old!r} stands {count} times in the source, not once")
        text = text.replace(old, new)
    return text


def spec_path(source):
    """Where the variant specification of a chapter source lives."""
    source = Path(source)
    return source.parent / VARIANT_DIR / f"{source.stem}.py"


def load_spec(source):
    """``{exercise id: [Variant, ...]}`` of a chapter source (FileNotFoundError without one)."""
    path = spec_path(source)
    if not path.exists():
        raise FileNotFoundError(f"{source}: no variant specification at {path}")
    module_spec = importlib.util.spec_from_file_location(f"variants_{Path(source).stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module.VARIANTS


def spec_problems(source, spec):
    """What a specification lacks: exercises without variants, too few of a kind, unknown ids."""
    _, found = read_source(source)
    ids = [exercise.id for exercise in found]
    problems = [f"{exercise_id}: no such exercise in {Path(source).name}"
                for exercise_id in spec if exercise_id not in ids]
    for exercise_id in ids:
        variants = spec.get(exercise_id, [])
        right = sum(v.kind == "correct" for v in variants)
        wrong = sum(v.kind == "mistake" for v in variants)
        if right < MIN_CORRECT:
            problems.append(f"{exercise_id}: {right} correct variants, at least {MIN_CORRECT} "
                            f"needed")
        if wrong < MIN_MISTAKES:
            problems.append(f"{exercise_id}: {wrong} mistakes, at least {MIN_MISTAKES} needed")
    return problems


@dataclass
class Result:
    """How the visible check judged one variant, and whether that is what the spec says."""
    exercise: str
    kind: str
    title: str
    outcome: str          # "passed", or the exception's type name
    message: str          # the failure message (empty when it passed)
    as_specified: bool
    why: str = ""         # what is wrong when not as specified
    output: str = field(default="", repr=False)


def judge(exercise_id, variant, runs):
    """A Result from the runs of a variant's cells (its solution, then the checks)."""
    failed = next((run for run in runs if not run.ok), None)
    printed = "".join(run.output for run in runs)
    if failed is None:
        outcome, message = "passed", ""
        if f"✓ {exercise_id} passed" not in printed:
            outcome = "no verdict"   # the checks ran through without saying "passed"
    else:
        outcome, message = type(failed.error).__name__, str(failed.error)
    if variant.kind == "correct":
        ok = outcome == "passed"
        why = "" if ok else (f"a correct variant must pass the visible check; it ended with "
                             f"{outcome}: {message or failed.trace if failed else printed}")
    else:
        missing = [words for words in variant.feedback if words.lower() not in message.lower()]
        ok = outcome == variant.raises and not missing
        if outcome == "passed":
            why = "a mistake must fail the visible check, and it passed"
        elif outcome != variant.raises:
            why = f"expected {variant.raises}, got {outcome}: {message}"
        else:
            why = f"the feedback does not say {missing}" if missing else ""
    return Result(exercise_id, variant.kind, variant.title, outcome, message, ok, why, printed)


def _rng_state():
    """Every random generator a cell may draw from: learntorch's, numpy's, Python's (and
    PyTorch's when it is loaded), to put back before each variant."""
    import numpy as np
    state = {"random": random.getstate(), "numpy": np.random.get_state()}
    for name in ("learntorch", "torch"):
        module = sys.modules.get(name)
        if module is not None:
            state[name] = module.get_rng_state()
    return state


def _set_rng_state(state):
    import numpy as np
    random.setstate(state["random"])
    np.random.set_state(state["numpy"])
    for name in ("learntorch", "torch"):
        if name in state:
            sys.modules[name].set_rng_state(state[name])


def run_chapter(source, spec=None, timeout=CELL_SECONDS, log=None):
    """Try every variant of a chapter source against its visible checks; a list of Results.

    ``log`` (a callable taking a line) hears about progress.  Raises RuntimeError when
    the chapter itself fails (a cell outside the exercises, or the instructor's own
    solution): then no variant's verdict could be trusted.
    """
    source = Path(source)
    spec = load_spec(source) if spec is None else spec
    notebook, found = read_source(source)
    by_id = {exercise.id: exercise for exercise in found}
    cells = notebook["cells"]
    runner = CellRunner()
    results = []
    say = log or (lambda line: None)
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        mark = marks(cell)
        role = mark.get("role")
        if role in ("check", "hidden-check"):
            continue  # run with their solution, below (hidden checks never)
        if role == "solution":
            exercise = by_id[mark["exercise"]]
            checks = [(i, cells[i]["source"]) for i in exercise.checks]
            before = _rng_state()
            for variant in spec.get(exercise.id, []):
                _set_rng_state(before)
                trial = runner.fork()
                runs = [trial.run(variant.source, f"{exercise.id} {variant.kind}: {variant.title}",
                                  timeout)]
                if runs[0].ok:
                    runs += [trial.run(check, f"cell {i + 1}", timeout) for i, check in checks]
                result = judge(exercise.id, variant, runs)
                say(f"{'ok ' if result.as_specified else 'NOT'} {exercise.id} {variant.kind:7s} "
                    f"{variant.title}: {result.outcome}")
                results.append(result)
            _set_rng_state(before)
            instructor = Variant("correct", "the instructor's solution", cell["source"])
            runs = [runner.run(cell["source"], f"cell {index + 1}", timeout)]
            runs += [runner.run(check, f"cell {i + 1}", timeout) for i, check in checks]
            result = judge(exercise.id, instructor, runs)
            if not result.as_specified:
                raise RuntimeError(f"{source.name}: the instructor's solution of {exercise.id} "
                                   f"fails its visible check: {result.why}")
            continue
        run = runner.run(cell["source"], f"cell {index + 1}", timeout)
        if not run.ok:
            raise RuntimeError(f"{source.name}: cell {index + 1} (outside the exercises) "
                               f"failed:\n{run.trace}")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m course.variants", description=(
        "Try each learner variant of a chapter's exercises against its visible checks."))
    parser.add_argument("source", help="a chapter source, course/solutions/NN_topic.ipynb")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--timeout", type=int, default=CELL_SECONDS,
                        help="seconds a cell may run (default %(default)s)")
    args = parser.parse_args(argv)
    spec = load_spec(args.source)
    problems = spec_problems(args.source, spec)
    results = run_chapter(args.source, spec, args.timeout, log=print)
    wrong = [r for r in results if not r.as_specified]
    for result in wrong:
        print(f"\n{result.exercise} {result.kind} {result.title!r}: {result.why}")
    for problem in problems:
        print(f"specification: {problem}")
    if args.json:
        Path(args.json).write_text(json.dumps({"problems": problems,
                                               "results": [asdict(r) for r in results]},
                                              indent=1), encoding="utf-8")
    print(f"{len(results) - len(wrong)} of {len(results)} variants judged as specified")
    return 1 if wrong or problems else 0


if __name__ == "__main__":
    sys.exit(main())
