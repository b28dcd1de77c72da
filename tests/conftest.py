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


@pytest.fixture(autouse=True)
def _engine_state_put_back(request):
    """A test that leaves learntorch's global state changed -- the tier, the backend, grad
    mode, an autocast region, the default dtype, the thread cap -- would change every test
    after it on the same worker, which then fails (or passes) for a reason of another test.
    So the state is put back after each test, and a warning names the test that left it."""
    before = _engine_state()
    yield
    after = _engine_state()
    changed = [name for name in before if before[name][0] != after[name][0]]
    if changed:
        _put_back(before)
        import warnings
        warnings.warn(f"{request.node.nodeid} left learntorch's {', '.join(changed)} changed "
                      "(put back after it)", stacklevel=1)


def _engine_state():
    """name -> (what is compared, what puts it back) for each piece of global state."""
    import learntorch
    from learntorch import backends, tiers
    from learntorch.amp import autocast_mode
    from learntorch.autograd import grad_mode
    from learntorch.backends.numba_cpu import loader
    backend = backends.current
    autocast = autocast_mode._State
    return {
        "tier": (tiers.get_tier(), None),
        "backend": ((type(backend), getattr(backend, "min_size", None)), backend),
        "grad mode": (grad_mode._state.enabled, None),
        "autocast state": ((tuple(autocast.enabled.items()), tuple(autocast.dtype.items()),
                            autocast.nesting), None),
        "default dtype": (learntorch.get_default_dtype(), None),
        # (compared as get_num_threads reads it: set_num_threads(get_num_threads()) puts
        # back a cap equal to no cap)
        "thread cap": (loader.thread_cap(), loader._thread_cap),
    }


def _put_back(state):
    import learntorch
    from learntorch import backends, tiers
    from learntorch.amp import autocast_mode
    from learntorch.autograd import grad_mode
    from learntorch.backends.numba_cpu import loader
    tiers.set_tier(state["tier"][0])
    backends.set_backend(state["backend"][1])
    grad_mode._state.enabled = state["grad mode"][0]
    enabled, dtypes, nesting = state["autocast state"][0]
    autocast_mode._State.enabled, autocast_mode._State.dtype = dict(enabled), dict(dtypes)
    autocast_mode._State.nesting = nesting
    autocast_mode._rebuild()
    learntorch.set_default_dtype(state["default dtype"][0])
    loader.set_thread_cap(state["thread cap"][1])


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
