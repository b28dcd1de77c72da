"""A spy on the Numba backend's kernel loader: which kernels a call really ran.

A test that compares a kernel with the numpy reference must know that the kernel ran: a
silent fall back to the reference would compare the reference with itself.
"""
import contextlib


@contextlib.contextmanager
def kernel_calls(*modules, qualified=False):
    """Record every kernel called through ``kernels(family)`` in ``modules`` (each a
    backend file that imported ``loader.kernels``): its name, or "family.name" when
    ``qualified``.  Yields the list of calls, filled as they happen."""
    calls = []
    real = {module: module.kernels for module in modules}
    loader = next(iter(real.values()))

    def recording(family):
        kernel_module = loader(family)

        class Spy:
            def __getattr__(self, name):
                def call(*args):
                    calls.append(f"{family}.{name}" if qualified else name)
                    return getattr(kernel_module, name)(*args)
                return call
        return Spy()

    for module in modules:
        module.kernels = recording
    try:
        yield calls
    finally:
        for module, original in real.items():
            module.kernels = original
