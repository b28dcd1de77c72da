"""``set_num_threads`` / ``get_num_threads``: how many CPU threads one operation may use.

learntorch's parallel work is its Numba kernels (``backends/numba_cpu``): a kernel big
enough to be worth it runs on every usable CPU, a small one on one thread.  The number
set here caps that; numpy's own operations (and BLAS) are not affected.
"""
import builtins


def set_num_threads(int):  # (torch's parameter name, which shadows the builtin here)
    """Use at most ``int`` threads for the parallel CPU kernels."""
    if not isinstance(int, builtins.int) or isinstance(int, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(int).__name__}")
    if int <= 0:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {int}")
    from .backends.numba_cpu import loader
    loader.set_thread_cap(int)


def get_num_threads():
    """The most threads a parallel CPU kernel will use."""
    from .backends.numba_cpu import loader
    return loader.thread_cap()
