"""Random numbers: ``manual_seed``, ``Generator``, and the default generator.

Each ``Generator`` wraps numpy's PCG64 bit generator.  The same seed gives the
same numbers on every machine, run after run; the numbers differ from torch's
(whose Mersenne-Twister sequences are not reproduced).
"""
import numpy as np


class Generator:
    """A source of random numbers with its own state, as ``torch.Generator``."""

    def __init__(self, device="cpu"):
        self.device = device
        self._seed = 67280421310721
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            seed += 2 ** 64
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return _GeneratorState(self._rng.bit_generator.state, self._seed)

    def set_state(self, state):
        if not isinstance(state, _GeneratorState):
            raise TypeError("set_state expects a state returned by get_state()")
        self._rng.bit_generator.state = state.state
        self._seed = state.seed
        return self

    # numpy's generator does the work; these are what the factories call
    def __getattr__(self, name):
        return getattr(self._rng, name)


class _GeneratorState:
    """An opaque copy of a generator's state (``torch.get_rng_state``)."""

    def __init__(self, state, seed):
        import copy
        self.state, self.seed = copy.deepcopy(state), seed


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator (and CUDA's, when present); returns the generator."""
    default_generator.manual_seed(seed)
    import sys
    cuda_random = sys.modules.get("learntorch.backends.cuda.random")  # loaded: seed it too
    if cuda_random is not None:
        cuda_random.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def _generator(generator):
    return default_generator if generator is None else generator
