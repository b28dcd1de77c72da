"""Where compiled kernels' sources go: ``$LEARNTORCH_COMPILE_CACHE``, or the temporary
directory's folder when that one cannot be written (a grading sandbox passes the engine's
LEARNTORCH_* settings on, but sees the host's folders read-only)."""
import os
import tempfile

import numpy as np

import learntorch
from learntorch.compiler import cache


def test_the_folder_named_by_the_environment_is_used_when_it_can_be_written(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("LEARNTORCH_COMPILE_CACHE", str(tmp_path / "kernels"))
    assert cache.cache_dir() == str(tmp_path / "kernels")
    assert os.path.isdir(tmp_path / "kernels")


def test_an_unusable_folder_falls_back_to_the_temporary_directory_and_compiles(tmp_path,
                                                                               monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("LEARNTORCH_COMPILE_CACHE", str(blocker / "kernels"))
    folder = cache.cache_dir()
    assert os.path.dirname(folder) == tempfile.gettempdir()
    assert os.path.basename(folder).startswith("learntorch_compile_")

    learntorch.compiler.reset()
    cache.clear_memory()
    x = learntorch.randn(5)
    compiled = learntorch.compile(lambda t: (t * 2 + 1).relu() * 3)
    np.testing.assert_array_equal(compiled(x).numpy(), ((x * 2 + 1).relu() * 3).numpy())
