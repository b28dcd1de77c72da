"""Which of the API probe's 250 course-plausible torch names learntorch lacks.

    python scripts/api_probe.py              # the missing names, by group, and their count
    python scripts/api_probe.py --max 60     # exit 1 when more than 60 are missing

The names (``scripts/api_probe.txt``) are a fixed sample of what a course program reaches
for -- creation, math, reductions, shapes, Tensor methods, ``nn.functional``, ``nn``
modules, ``optim`` and ``lr_scheduler``, data -- written once, independently of what
learntorch has, so that the count measures the gap.  ``scripts/api_table.py`` lists the
missing ones in docs/api.md; ``tests/test_project_api_probe.py`` keeps the list valid
(250 distinct names, each one torch's) and the count under the target.
"""
import argparse
import importlib
import sys
from pathlib import Path

NAMES = Path(__file__).resolve().parent / "api_probe.txt"
TARGET = 60  # at most this many missing (the fidelity issue's target)


def load():
    """[(group, torch name)] in the file's order; a group is the comment above it."""
    group, rows = "", []
    for line in NAMES.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("#"):
            group = line.lstrip("# ")
        elif line:
            rows.append((group, line))
    return rows


def has(root, dotted):
    """Whether ``torch.a.b`` resolves under ``root`` (attributes, or submodules to import)."""
    parts = dotted.split(".")[1:]
    obj = root
    for i, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        if not isinstance(obj, type(sys)):
            return False
        try:
            obj = importlib.import_module(f"{root.__name__}.{'.'.join(parts[:i + 1])}")
        except ImportError:
            return False
    return True


def missing():
    """[(group, torch name)] that ``learntorch`` lacks."""
    import learntorch
    return [(group, name) for group, name in load() if not has(learntorch, name)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=None, help="exit 1 above this many missing")
    args = parser.parse_args(argv)
    absent = missing()
    for group, name in absent:
        print(f"{group:40} {name}")
    print(f"{len(absent)} of {len(load())} names missing")
    return 1 if args.max is not None and len(absent) > args.max else 0


if __name__ == "__main__":
    sys.exit(main())
