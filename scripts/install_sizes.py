"""How much each install of the project weighs: the packages an extra pulls in, and their size.

    python scripts/install_sizes.py lab test

Reads the project's requirements from pyproject.toml and the installed distributions'
metadata for the rest (run it in the test install, which holds every extra): for each
extra, the closure of its requirements (markers evaluated here) and the bytes of the
files each package installed (its RECORD).  The learner's install
(``lab``) should stay far below the test install (``test``: oracle, browser, CUDA
simulator, grading machinery).
"""
import importlib.metadata as metadata
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement


def _name(text):
    return re.sub(r"[-_.]+", "-", text).lower()


def _size(dist):
    total = 0
    for f in dist.files or ():
        path = Path(dist.locate_file(f))
        if path.is_file():
            total += path.stat().st_size
    return total


PROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())[
    "project"]


def _project_requirements(extra):
    """The project's own requirements for ``extra`` ("" for the base), from pyproject.toml
    (its installed metadata can be older than the file)."""
    if not extra:
        return [Requirement(t) for t in PROJECT["dependencies"]]
    return [Requirement(t) for t in PROJECT["optional-dependencies"][extra]]


def closure(project, extras):
    """{distribution name: Distribution} of everything ``project[extras]`` needs here."""
    found, seen, todo = {}, set(), [(project, extra) for extra in extras]
    todo.append((project, ""))
    while todo:
        name, extra = todo.pop()
        if (_name(name), extra) in seen:
            continue
        seen.add((_name(name), extra))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            print(f"  (not installed here: {name})", file=sys.stderr)
            continue
        found[_name(dist.metadata["Name"])] = dist
        if _name(name) == _name(project):
            requirements = _project_requirements(extra)
        else:
            requirements = [Requirement(t) for t in dist.requires or ()]
        for req in requirements:
            if req.marker is None or req.marker.evaluate({"extra": extra}):
                todo.extend((req.name, e) for e in ("", *req.extras))
    return found


def main(argv):
    for extra in argv or ["lab", "test"]:
        dists = closure("learntorch", [extra])
        sizes = sorted(((_size(d), n) for n, d in dists.items()), reverse=True)
        total = sum(s for s, _ in sizes)
        print(f"[{extra}]: {len(sizes)} packages, {total / 2**20:.0f} MiB installed; largest: "
              + ", ".join(f"{n} {s / 2**20:.0f}" for s, n in sizes[:6]))


if __name__ == "__main__":
    main(sys.argv[1:])
