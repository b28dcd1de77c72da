"""binder/: the environment Binder builds for the course.

Binder (repo2docker) reads only binder/ when it exists: pinned requirements that end
by installing the repository itself, graphviz from apt, Python 3.11, a postBuild that
fills Numba's cache and a start script that points Numba at it at every launch."""
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def requirement_lines():
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_requirements_are_pinned_to_the_tested_versions_and_install_the_repository():
    lines = requirement_lines()
    assert lines[-1] == ".", "the last requirement must be `.` (the repository itself)"
    pins = dict(line.split("==") for line in lines[:-1])
    assert {"numpy", "numba", "jupyterlab", "ipywidgets", "matplotlib", "graphviz",
            "graphviz-pure"} <= set(pins)
    for name, pinned in pins.items():
        assert version(name) == pinned, (f"binder/requirements.txt pins {name}=={pinned} but "
                                         f"the tests run with {version(name)}; update the pin")


def test_binder_installs_what_a_learner_installs():
    """Binder is a learner's environment: the engine, JupyterLab, the widgets and what the
    chapters use (pyproject.toml's dependencies and `lab` extra, as `make lab`), and the
    kernel that runs them; none of the test machinery."""
    from test_project_setup import extra_requirements, requirement_name

    learner = {requirement_name(r) for r in extra_requirements("lab")}
    pinned = {line.split("==")[0].lower() for line in requirement_lines()[:-1]}
    assert pinned == learner | {"ipykernel"}


def test_apt_runtime_and_scripts():
    assert (BINDER / "apt.txt").read_text().split() == ["graphviz"]
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    for script in ("postBuild", "start"):
        path = BINDER / script
        assert os.access(path, os.X_OK), f"binder/{script} must be executable"
        assert path.read_text().startswith("#!/bin/bash\n")
    assert (BINDER / "start").read_text().rstrip().endswith('exec "$@"')


def test_postbuild_warms_the_numba_cache_that_start_points_at(tmp_path):
    post_build = (BINDER / "postBuild").read_text()
    assert "learntorch.backends as b; " in post_build and "b.warmup()" in post_build
    import learntorch.backends
    assert callable(learntorch.backends.warmup)
    # both scripts take the cache folder from the same place
    shown = subprocess.run([str(BINDER / "start"), "printenv", "NUMBA_CACHE_DIR"],
                           env={**os.environ, "HOME": str(tmp_path)}, capture_output=True,
                           text=True, check=True)
    assert shown.stdout.strip() == f"{tmp_path}/.cache/learntorch-numba"
    assert 'source "$(dirname "$0")/numba_cache.sh"' in post_build


def test_repo2docker_builds_graphviz_the_requirements_and_runs_postbuild():
    repo2docker = shutil.which("repo2docker", path=str(Path(sys.executable).parent))
    if repo2docker is None:
        pytest.skip("needs jupyter-repo2docker (pip install jupyter-repo2docker)")
    # --no-build prints the Dockerfile Binder would build, without Docker
    done = subprocess.run([repo2docker, "--no-build", "--debug", str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    dockerfile = done.stdout + done.stderr
    assert done.returncode == 0, dockerfile[-3000:]
    assert re.search(r"apt-get install --yes --no-install-recommends graphviz", dockerfile)
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in dockerfile
    assert "RUN ./binder/postBuild" in dockerfile
    assert dockerfile.index('-r "binder/requirements.txt"') < dockerfile.index("./binder/postBuild")
    assert 'R2D_ENTRYPOINT="${REPO_DIR}/binder/start"' in dockerfile
    assert "Building conda environment for python=3.11" in dockerfile


def test_the_readme_launches_every_chapter_on_binder():
    from course.notebook import chapter_sources
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Run it on Binder"):]
    chapters = [p.name for p in chapter_sources(ROOT / "course" / "solutions")]
    assert chapters, "no chapter sources in course/solutions"
    for name in chapters:
        link = f"https://mybinder.org/v2/gh/learntorch/learntorch/HEAD?urlpath=lab/tree/chapters/{name}"
        assert link in section, (f"README's Binder section has no launch link for {name}; add "
                                 f"the row | {name[:2]} ... | [open on Binder]({link}) |")
    assert "badge_logo.svg" in section


def test_the_readme_tells_instructors_how_to_release_and_grade():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## For instructors"):]
    for words in ("learntorch-course release course/solutions chapters",
                  "learntorch-course grade --source course/solutions", "gradebook.csv",
                  "--timeout", "hidden check", "feedback"):
        assert words in section, f"README's instructor section lacks {words!r}"
