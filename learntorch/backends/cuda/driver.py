"""Where numba-cuda is imported, and the launch geometry every kernel shares.

Importing ``numba.cuda`` costs time and needs either a GPU with its driver or
Numba's CUDA *simulator* (``NUMBA_ENABLE_CUDASIM=1``: every CUDA thread runs
as a Python thread on the CPU -- slow, but it runs the very same kernel code,
shared memory and ``syncthreads`` included, on any machine).  So nothing here
imports it until the first cuda tensor is made, and ``numba_cuda()`` is the
one door through which the other files reach it.

Launch geometry: a kernel over ``n`` elements runs ``blocks(n)`` blocks of
``THREADS`` threads; thread ``cuda.grid(1)`` handles element ``i`` (threads
past ``n`` do nothing).  The simulator uses smaller blocks, because each
simulated thread is a real Python thread.
"""
import functools


@functools.lru_cache(maxsize=None)
def numba_cuda():
    """The ``numba.cuda`` module (imported on first use)."""
    from numba import cuda
    return cuda


def simulated():
    """True when kernels run in Numba's CUDA simulator instead of on a GPU.

    Numba's own setting (read from the environment when Numba was imported) decides, not
    the environment now: that is what numba.cuda followed when it chose the simulator."""
    from numba import config
    return bool(config.ENABLE_CUDASIM)


@functools.lru_cache(maxsize=None)
def available():
    """True when CUDA kernels can run here: a GPU with a driver, or the simulator."""
    try:
        return bool(numba_cuda().is_available())
    except Exception:  # numba-cuda missing or broken: no device
        return False


def threads_per_block():
    """Threads in one block of an elementwise or reduction kernel (a power of two)."""
    return 32 if simulated() else 256


def blocks(n, threads=None):
    """Blocks needed so that one thread covers each of ``n`` elements (at least one)."""
    threads = threads or threads_per_block()
    return max(1, (n + threads - 1) // threads)


def launch(kernel, n):
    """``kernel`` configured with one thread per element for ``n`` elements."""
    threads = threads_per_block()
    return kernel[blocks(n, threads), threads]
