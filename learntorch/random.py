"""Random numbers: ``manual_seed``, ``Generator``, and the default generator.

Each ``Generator`` wraps numpy's PCG64 bit generator.  The same seed gives the
same numbers on every machine, run after run; the numbers differ from torch's
(whose Mersenne-Twister sequences are not reproduced).

``get_rng_state()`` / ``Generator.get_state()`` return the state as a uint8
tensor, as torch's do, so a checkpoint saved with ``learntorch.save`` can hold
it and a resumed run draws exactly the numbers the uninterrupted one would.
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
        """The generator's state as a uint8 tensor (``torch.Generator.get_state``).

        A plain tensor, so a checkpoint can hold it: ``learntorch.save`` stores it
        like any other, and ``set_state`` takes it back.  Its bytes are this
        generator's own (see ``_STATE_LAYOUT``), not torch's 5056-byte Mersenne
        Twister state: the two libraries cannot exchange states.
        """
        from .factories import from_numpy
        return from_numpy(_pack_state(self._rng.bit_generator.state, self._seed))

    def set_state(self, new_state):
        """Go back to a state ``get_state`` returned: the next numbers are the ones that
        followed it."""
        state, seed = _unpack_state(new_state)
        self._rng.bit_generator.state = state
        self._seed = seed
        return self

    # numpy's generator does the work; these are what the factories call
    def __getattr__(self, name):
        return getattr(self._rng, name)


# ---- the state as bytes ----------------------------------------------------------------
# numpy's PCG64 is all the state there is (numpy's Generator keeps no cached normal
# value), so these fields restore the stream exactly:
#   magic     8 bytes   b"LTPCG64" and a format version, so a foreign state is recognised
#   seed      8 bytes   what initial_seed() reports
#   state    16 bytes   the 128-bit LCG state
#   inc      16 bytes   the 128-bit LCG increment (which stream)
#   has_uint32 1 byte   a buffered half of a 64-bit draw is waiting ...
#   uinteger  4 bytes   ... and this is it
# all little-endian, 53 bytes in all.
_MAGIC = b"LTPCG64\x01"
_STATE_LAYOUT = (("seed", 8), ("state", 16), ("inc", 16), ("has_uint32", 1), ("uinteger", 4))
_STATE_SIZE = len(_MAGIC) + sum(n for _, n in _STATE_LAYOUT)


def _pack_state(state, seed):
    values = {"seed": seed, "state": state["state"]["state"], "inc": state["state"]["inc"],
              "has_uint32": state["has_uint32"], "uinteger": state["uinteger"]}
    raw = _MAGIC + b"".join(int(values[name]).to_bytes(n, "little") for name, n in _STATE_LAYOUT)
    return np.frombuffer(raw, dtype=np.uint8).copy()


def _unpack_state(new_state):
    """(numpy's state dict, seed) from a tensor ``_pack_state`` made; torch's errors otherwise."""
    from ._tensor import Tensor
    if not isinstance(new_state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}: pass "
                        "the uint8 tensor that get_rng_state() / Generator.get_state() returned")
    if new_state.dtype.name != "uint8":
        raise TypeError(f"RNG state must be a torch.ByteTensor (uint8), got a tensor of dtype "
                        f"{new_state.dtype}: pass what get_rng_state() returned, unchanged")
    raw = new_state.detach().cpu().numpy().reshape(-1).tobytes()
    if len(raw) != _STATE_SIZE:
        torch_hint = (" (5056 bytes is PyTorch's Mersenne Twister state: learntorch's "
                      "generator is a different one and cannot continue torch's stream)"
                      if len(raw) == 5056 else "")
        raise RuntimeError(f"Expected a learntorch generator state of size {_STATE_SIZE} but found "
                           f"the input RNG state size to be {len(raw)}{torch_hint}")
    if raw[:len(_MAGIC)] != _MAGIC:
        raise RuntimeError("this RNG state was not made by learntorch's get_rng_state() (its "
                           "first bytes are not learntorch's PCG64 marker): it may be damaged")
    values, at = {}, len(_MAGIC)
    for name, n in _STATE_LAYOUT:
        values[name] = int.from_bytes(raw[at:at + n], "little")
        at += n
    if values["has_uint32"] not in (0, 1) or values["inc"] % 2 == 0:
        raise RuntimeError("this RNG state is damaged (PCG64 needs an odd increment and a 0/1 "
                           "buffered-draw flag): pass what get_rng_state() returned, unchanged")
    state = {"bit_generator": "PCG64", "state": {"state": values["state"], "inc": values["inc"]},
             "has_uint32": values["has_uint32"], "uinteger": values["uinteger"]}
    return state, values["seed"]


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
    """The default generator's state as a uint8 tensor (save it in a checkpoint)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator from what ``get_rng_state`` returned."""
    default_generator.set_state(new_state)


def _generator(generator):
    return default_generator if generator is None else generator
