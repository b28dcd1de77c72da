import pytest

import learntorch


@pytest.fixture(autouse=True)
def _fresh_compiler():
    """Each test starts with no compiled entries left by another (kernels stay on disk)."""
    learntorch.compiler.reset()
    yield
    learntorch.compiler.reset()
