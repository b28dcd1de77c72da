import os

import numpy as np
import pytest
from hypothesis import settings

# enough examples to find broadcasting and stride bugs, few enough for a 2-core CI
# CI draws the same examples on every run (derandomize): a red CI always reproduces
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=15, deadline=None)
# make check's run of tests/ops through learntorch.compile: every test, a few examples each
settings.register_profile("compile", max_examples=3, deadline=None, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _seeded():
    """Every test starts from the same random state, so failures reproduce."""
    import learntorch
    learntorch.manual_seed(0)
    np.random.seed(0)
    yield


@pytest.fixture(params=["numba", "numpy"])
def backend(request):
    """Run a test once with each CPU backend: the compiled kernels and the numpy reference.

    The Numba backend is built with ``min_size=0`` so that even the small arrays
    of a test really go through the kernels (by default small arrays use numpy).
    """
    import learntorch
    from learntorch.backends import NumbaBackend
    chosen = NumbaBackend(min_size=0) if request.param == "numba" else "numpy"
    with learntorch.backends.use(chosen) as b:
        yield b


# ---- pytest --through-compile=BACKEND[,BACKEND]: the oracle programs through learntorch.compile
def pytest_addoption(parser):
    parser.addoption("--through-compile", default="", metavar="BACKENDS",
                     help="run learntorch's side of every oracle program (tests/oracle.py) "
                          "through learntorch.compile with these backends (numba, reference, "
                          "eager; comma-separated) and check it against eager first "
                          "(tests/compiler/through_compile.py)")


def pytest_configure(config):
    backends = config.getoption("--through-compile")
    if backends:
        import sys
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "compiler"))
        import through_compile
        config._through_compile = through_compile.install(backends.split(","))


def pytest_sessionfinish(session):
    hook = getattr(session.config, "_through_compile", None)
    if hook is not None and hasattr(session.config, "workeroutput"):  # a pytest-xdist worker
        session.config.workeroutput["through_compile"] = hook.figures()


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_testnodedown(node, error):
    hook = getattr(node.config, "_through_compile", None)
    figures = getattr(node, "workeroutput", {}).get("through_compile")
    if hook is not None and figures:
        hook.add(figures)


def pytest_terminal_summary(terminalreporter, config):
    hook = getattr(config, "_through_compile", None)
    if hook is not None:
        for line in hook.summary():
            terminalreporter.write_line(line)
