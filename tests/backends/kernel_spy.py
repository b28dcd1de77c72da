"""Which calls reach a Numba kernel: a backend module's ``kernels()`` wrapped by a recorder."""
from learntorch.backends.numba_cpu.loader import kernels


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
