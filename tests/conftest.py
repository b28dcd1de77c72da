import os

import numpy as np
import pytest
from hypothesis import settings

# enough examples to find broadcasting and stride bugs, few enough for a 2-core CI
# CI draws the same examples on every run (derandomize): a red CI always reproduces
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=15, deadline=None)
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
