"""Autocast's state is per thread, as torch's: a region entered in one thread casts that
thread's ops only, a new thread starts with autocast off, and each thread's regions nest and
end on their own -- compared with torch 2.13 running the same threads."""
import threading

import pytest

import learntorch
from learntorch.autograd import function as _function
from tests.oracle import require_torch, torch


def _name(dtype):
    return str(dtype).split(".")[-1]


def _matmul_dtype(lib):
    a = lib.ones(2, 2)
    return _name((a @ a).dtype)


def _in_thread(target):
    """Run ``target()`` in a new thread; return what it returned (or raise what it raised)."""
    result = {}

    def run():
        try:
            result["value"] = target()
        except BaseException as error:  # noqa: BLE001 -- handed to the test's thread
            result["error"] = error
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


@pytest.mark.parametrize("lib_name", ["learntorch", "torch"])
def test_a_new_thread_starts_with_autocast_off_inside_a_region(lib_name):
    if lib_name == "torch":
        require_torch()
    lib = learntorch if lib_name == "learntorch" else torch

    def other():
        return lib.is_autocast_enabled("cpu"), _matmul_dtype(lib)
    with lib.autocast("cpu"):
        seen = other()                     # this thread: in the region
        seen_by_other = _in_thread(other)  # another thread: not
    assert seen == (True, "bfloat16")
    assert seen_by_other == (False, "float32")


def test_threads_in_their_own_regions_do_not_see_each_other_as_torch():
    """Two threads, each in its own region with its own dtype, take turns (a barrier between
    each step): every op's dtype is its own thread's region's, in both libraries."""
    require_torch()
    traces = {}
    for lib in (learntorch, torch):
        barrier = threading.Barrier(2)

        def worker(dtype, trace):
            barrier.wait()
            trace.append(_matmul_dtype(lib))          # both outside any region
            with lib.autocast("cpu", dtype=dtype):
                barrier.wait()                        # both inside their regions now
                trace.append(_matmul_dtype(lib))
                trace.append(_name(lib.get_autocast_dtype("cpu")))
                barrier.wait()
            if dtype is lib.float16:
                barrier.wait()                        # the float16 thread has left; the
                trace.append(_matmul_dtype(lib))      # bfloat16 one may still be inside
                barrier.wait()
            else:
                barrier.wait()
                barrier.wait()
            trace.append(_matmul_dtype(lib))
        bf16, fp16 = [], []
        threads = [threading.Thread(target=worker, args=(lib.bfloat16, bf16)),
                   threading.Thread(target=worker, args=(lib.float16, fp16))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        traces[lib.__name__] = (bf16, fp16)
    assert traces["learntorch"] == traces["torch"]
    assert traces["learntorch"] == (["float32", "bfloat16", "bfloat16", "float32"],
                                    ["float32", "float16", "float16", "float32", "float32"])


def test_the_hook_comes_off_when_the_last_thread_leaves_its_region():
    assert _function._autocast_hook is None
    inside, leave = threading.Event(), threading.Event()

    def worker():
        with learntorch.autocast("cpu"):
            inside.set()
            leave.wait(10)
    thread = threading.Thread(target=worker)
    thread.start()
    inside.wait(10)
    with learntorch.autocast("cpu"):   # this thread's region ends first
        pass
    assert _function._autocast_hook is not None  # the other is still inside
    assert _matmul_dtype(learntorch) == "float32"              # and does not cast ours
    leave.set()
    thread.join()
    assert _function._autocast_hook is None
