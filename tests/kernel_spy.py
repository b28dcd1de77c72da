"""A spy on the Numba backend's kernel loader: which kernels a call really ran.

A test that compares a kernel with the numpy reference must know that the kernel ran: a
silent fall back to the reference would compare the reference with itself.
"""
import contextlib

from learntorch.backends.numba_cpu.loader import kernels


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


def spy_on_kernel(monkeypatch, module, family, name):
    """Route ``module``'s calls to ``kernels(family).name`` through a recorder; the list
    returned gets the shape of the first argument of every call (the kernel still runs)."""
    calls = []
    real = getattr(kernels(family), name)

    def recorded(*args):
        calls.append(args[0].shape)
        return real(*args)

    spy = type("Spy", (), {name: staticmethod(recorded)})
    monkeypatch.setattr(module, "kernels", lambda f: spy if f == family else kernels(f))
    return calls
