"""The project's set-up keeps its promises.

* the engine needs numpy and numba only: pyproject says so, and no file of
  ``learntorch/`` imports anything else (read with ``ast``, not trusted);
* PyTorch is only the test oracle, pinned exactly (a bare ``torch`` would take
  whatever build the index offers);
* a learner's install (``make lab``: the ``jupyter`` extra) has none of the test
  machinery; the tests' install (``make test``: the ``test`` extra) has all of it;
* ``.ci/run`` runs the README's ``make test``; the Makefile fails when pytest
  collected nothing, and says why;
* ``scripts/system_deps.sh`` installs Debian packages the quiet, non-interactive
  way when root, and names them when not.
"""
import ast
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# numpy and numba, and ml_dtypes for bfloat16 (numpy has none; ml_dtypes is numpy's standard
# extension for it, a small wheel)
ENGINE_DEPENDENCIES = {"numpy", "numba", "ml_dtypes"}


def requirement_name(requirement):
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


def test_the_engine_depends_on_numpy_numba_and_ml_dtypes_only():
    names = {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert names == ENGINE_DEPENDENCIES, (
        f"pyproject.toml's runtime dependencies are {sorted(names)}; the engine may need only "
        "numpy, numba and ml_dtypes. Put anything else in an extra (jupyter, dev, oracle, cuda).")


def test_the_torch_oracle_is_pinned_exactly_everywhere():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert extras["oracle"] == ["torch==2.13.0"]
    every = PYPROJECT["project"]["dependencies"] + [r for group in extras.values() for r in group]
    loose = [r for r in every if requirement_name(r) == "torch" and not re.fullmatch(
        r"torch==\d+\.\d+\.\d+", r.replace(" ", ""))]
    assert not loose, (f"{loose}: an unpinned torch makes pip download a multi-GB CUDA build; "
                       "pin it as torch==2.13.0")


# what only the tests need: none of it may reach a learner's install
TEST_MACHINERY = {"torch", "pytest", "pytest-xdist", "hypothesis", "nbval", "pytest-timeout",
                  "playwright", "jupyter-repo2docker", "numba-cuda", "cuda-toolkit"}


def extra_requirements(extra):
    """What ``pip install -e '.[extra]'`` asks for: the engine's dependencies and the extra's
    requirements, with learntorch's own extras (``learntorch[jupyter]``) expanded."""
    extras = PYPROJECT["project"]["optional-dependencies"]
    found, todo = list(PYPROJECT["project"]["dependencies"]), [extra]
    while todo:
        for requirement in extras[todo.pop()]:
            if requirement_name(requirement) == "learntorch":
                todo += re.search(r"\[(.*)\]", requirement).group(1).split(",")
            else:
                found.append(requirement)
    return found


def test_a_learner_install_has_none_of_the_test_machinery():
    learner = {requirement_name(r) for r in extra_requirements("lab")}
    assert {"numpy", "numba", "jupyterlab", "ipywidgets", "matplotlib", "graphviz"} <= learner
    assert not learner & TEST_MACHINERY, f"make lab would install {sorted(learner & TEST_MACHINERY)}"


def test_the_tests_install_is_everything():
    extras = PYPROJECT["project"]["optional-dependencies"]
    everything = {requirement_name(r) for r in extra_requirements("test")}
    every_extra = {requirement_name(r) for name, group in extras.items() for r in group
                   if requirement_name(r) != "learntorch"}
    assert TEST_MACHINERY <= everything and every_extra <= everything


def test_make_lab_installs_the_learner_extra_and_make_test_the_test_extra():
    # -W pyproject.toml: as if the project's requirements had just changed, so that make shows
    # the install steps even where an earlier install left its stamps
    lab = run_make("-s", "-n", "-W", "pyproject.toml", "lab").stdout
    test = run_make("-s", "-n", "-W", "pyproject.toml", "test").stdout
    assert '-e ".[lab]"' in lab and '".[test]"' not in lab
    assert '-e ".[test]"' in test


def imported_modules(path):
    """Top-level names of every absolute import in a file, including import_module("x")."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and (
                    getattr(node.func, "attr", None) == "import_module"
                    or getattr(node.func, "id", None) in ("__import__", "import_module")):
            if not node.args[0].value.startswith("."):
                yield node.lineno, node.args[0].value.split(".")[0]


# Optional components (DESIGN.md section 9): a package of an extra may be imported only by
# the subpackage whose feature needs it, which imports it when that feature is used (the
# test that `import learntorch` leaves it unimported lives with the feature's tests).
OPTIONAL_IMPORTS = {"learntorch/onnx": ("deploy", {"onnx", "onnxruntime"}),
                    "learntorch/distributed": ("distributed", {"mpi4py"})}


def test_the_engine_imports_only_numpy_numba_ml_dtypes_and_the_standard_library():
    allowed = ENGINE_DEPENDENCIES | set(sys.stdlib_module_names) | {"learntorch", "__future__"}
    files = sorted((ROOT / "learntorch").rglob("*.py"))
    assert len(files) > 10, "learntorch/ should hold the engine's files"

    def optional(path):
        for folder, (_, names) in OPTIONAL_IMPORTS.items():
            if path.relative_to(ROOT).as_posix().startswith(folder + "/"):
                return names
        return set()
    bad = [f"{path.relative_to(ROOT)}:{line}: import {name}"
           for path in files for line, name in imported_modules(path)
           if name not in allowed | optional(path)]
    assert not bad, ("the engine imports only numpy, numba, ml_dtypes and the standard library "
                     "(widgets, course and torch live outside it):\n  " + "\n  ".join(bad))


def test_optional_imports_are_declared_in_their_extra():
    extras = PYPROJECT["project"]["optional-dependencies"]
    for folder, (extra, names) in OPTIONAL_IMPORTS.items():
        assert (ROOT / folder).is_dir(), f"OPTIONAL_IMPORTS names {folder}, which is gone"
        declared = {requirement_name(r) for r in extras.get(extra, [])}
        assert names <= declared, f"{folder} imports {sorted(names - declared)}: add them to " \
                                  f"the [{extra}] extra of pyproject.toml"


def test_the_import_scan_sees_every_form_of_import(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text("import os, torch.nn\nfrom matplotlib import pyplot\nfrom . import x\n"
                      "import importlib\nimportlib.import_module('ipywidgets')\n"
                      "__import__('graphviz')\n")
    assert {name for _, name in imported_modules(source)} == {
        "os", "torch", "matplotlib", "importlib", "ipywidgets", "graphviz"}


def test_ci_runs_the_readme_test_command():
    run = ROOT / ".ci" / "run"
    assert run.stat().st_mode & stat.S_IXUSR, ".ci/run must be executable (chmod 755)"
    text = run.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    commands = [line.strip() for line in text.splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1] == "make test", "CI must run exactly what the README tells people to run"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make test" in readme and "make lab" in readme


def test_ci_run_is_committed_executable():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the file mode in git cannot be read")
    listed = subprocess.run(["git", "ls-files", "-s", ".ci/run"], cwd=ROOT, capture_output=True,
                            text=True).stdout
    if not listed:
        pytest.skip(".ci/run is not committed yet")
    assert listed.startswith("100755"), f"git records .ci/run as {listed.split()[0]}; " \
                                        "run: git update-index --chmod=+x .ci/run"


# ---------------------------------------------------------------- the Makefile, run for real
def run_make(*args, cwd=ROOT):
    if shutil.which("make") is None:
        pytest.skip("make is not installed (the README's first step installs it)")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MAKE", "PYTEST_XDIST", "NUMBA_CACHE_DIR"))}
    return subprocess.run(["make", "--no-print-directory", *args, f"PY={sys.executable}",
                           "PYTEST_WORKERS=0"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_make_check_fails_and_says_why_when_no_test_is_collected(tmp_path):
    result = run_make("check", f"PYTEST_ARGS=-p no:cacheprovider {tmp_path}")
    assert result.returncode != 0
    assert "collected no tests (exit code 5)" in result.stderr
    assert "Error 5" in result.stderr


def test_make_check_passes_the_exit_code_of_pytest_through_with_the_kernel_cache_set(
        tmp_path):
    # the tests run with the kernel cache inside the repository, so a second run starts warm
    (tmp_path / "test_one.py").write_text(
        "import os\n"
        "def test_passes():\n"
        f"    assert os.environ['NUMBA_CACHE_DIR'] == {str(ROOT / '.numba_cache')!r}\n")
    passing = run_make("check", f"PYTEST_ARGS=-p no:cacheprovider {tmp_path}")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "1 passed" in passing.stdout
    (tmp_path / "test_two.py").write_text("def test_fails():\n    assert 1 + 1 == 3\n")
    failing = run_make("check", f"PYTEST_ARGS=-p no:cacheprovider {tmp_path}")
    assert failing.returncode != 0
    assert "1 failed, 1 passed" in failing.stdout
    assert "Error 1" in failing.stderr  # make reports pytest's own exit code


def test_make_sets_a_numba_cache_inside_the_repository():
    result = run_make("-s", "help")
    assert result.returncode == 0
    match = re.search(r"NUMBA_CACHE_DIR=(\S+)", result.stdout)
    assert match and Path(match.group(1)) == ROOT / ".numba_cache"
    ignored = subprocess.run(["git", "check-ignore", "-q", ".numba_cache/x.nbi"], cwd=ROOT)
    assert ignored.returncode == 0, ".numba_cache/ must be git-ignored"


def test_chromium_is_installed_for_the_tests_only():
    """`make test` runs the browser tests, so it installs chromium; `make lab` does not."""
    lab = run_make("-s", "help").stdout
    assert re.search(r"Debian/Ubuntu packages: graphviz\b", lab)
    assert "chromium" not in lab.split("Debian/Ubuntu packages:")[1].splitlines()[0]
    for asked in (run_make("-s", "-n", "test").stdout, run_make("-s", "help", "WITH_CHROMIUM=1").stdout):
        assert "graphviz chromium" in asked
    refused = run_make("-s", "-n", "test", "WITH_CHROMIUM=0").stdout
    assert "chromium" not in refused


def test_bubblewrap_is_installed_for_grading():
    """Grading runs each submission in a bubblewrap sandbox: `make lab` (instructors grade
    from it) and `make test` (the grading specs) both install it."""
    assert re.search(r"Debian/Ubuntu packages: .*\bbubblewrap\b", run_make("-s", "help").stdout)
    assert re.search(r"system_deps\.sh .*\bbubblewrap\b", run_make("-s", "-n", "test").stdout)


# ---------------------------------------------------------------- system packages
def fake_system(tmp_path, uid):
    """A PATH where id, dpkg-query and apt-get are stand-ins that record how they were called."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    scripts = {
        "id": f"#!/bin/sh\necho {uid}\n",
        "dpkg-query": "#!/bin/sh\nexit 1\n",  # nothing is installed
        "apt-get": f'#!/bin/sh\necho "DEBIAN_FRONTEND=$DEBIAN_FRONTEND apt-get $*" >> {log}\n',
    }
    for name, body in scripts.items():
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin")
    return env, log


def test_system_deps_as_root_updates_then_installs_quietly(tmp_path):
    env, log = fake_system(tmp_path, uid=0)
    result = subprocess.run(["bash", str(ROOT / "scripts" / "system_deps.sh"),
                             "lt-fake-package"], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert calls[0] == "DEBIAN_FRONTEND=noninteractive apt-get update -qq"
    assert calls[1] == ("DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                        "--no-install-recommends lt-fake-package")


def test_system_deps_not_root_names_the_packages_and_installs_nothing(tmp_path):
    env, log = fake_system(tmp_path, uid=1000)
    result = subprocess.run(["bash", str(ROOT / "scripts" / "system_deps.sh"),
                             "lt-fake-package", "lt-other"], env=env, capture_output=True,
                            text=True)
    assert result.returncode == 0
    assert "sudo apt-get install -y --no-install-recommends lt-fake-package lt-other" \
        in result.stderr
    assert not log.exists()


def test_system_deps_does_nothing_when_the_program_is_there(tmp_path):
    env, log = fake_system(tmp_path, uid=0)
    (tmp_path / "bin" / "dot").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "dot").chmod(0o755)
    result = subprocess.run(["bash", str(ROOT / "scripts" / "system_deps.sh"), "graphviz"],
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout == "" and not log.exists()


def test_every_data_file_of_the_engine_ships_in_the_package():
    """A plain `pip install .` (Binder) copies only .py files and declared package data."""
    import fnmatch
    patterns = PYPROJECT["tool"]["setuptools"].get("package-data", {}).get("learntorch", [])
    data = [p.relative_to(ROOT / "learntorch").as_posix()
            for p in (ROOT / "learntorch").rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    undeclared = [f for f in data if not any(fnmatch.fnmatch(f, pat) for pat in patterns)]
    assert not undeclared, (f"{undeclared} would be missing from an installed learntorch: add "
                            "them to [tool.setuptools.package-data] in pyproject.toml")


def test_the_learners_install_is_a_fraction_of_the_test_install():
    """scripts/install_sizes.py measures both installs; the learner's weighs less than half
    of the test install (which adds torch, the browser driver, the CUDA compilers)."""
    done = subprocess.run([sys.executable, "scripts/install_sizes.py", "lab", "test"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    lab, test = done.stdout.splitlines()
    mib = lambda line: int(line.split(" MiB")[0].rsplit(" ", 1)[1])
    assert lab.startswith("[lab]:") and test.startswith("[test]:")
    assert mib(lab) < mib(test) / 2, done.stdout
