"""Random numbers made on the GPU: a counter-based generator, Philox4x32-10.

A CPU generator (numpy's PCG64, ``learntorch/random.py``) is a *sequence*:
each number comes from the state the previous one left behind, so numbers
are made one after the other.  Thousands of GPU threads cannot wait for each
other like that.  A *counter-based* generator (Salmon et al., "Parallel
random numbers: as easy as 1, 2, 3", 2011 -- the Random123 library, also the
generator behind torch's and cuRAND's CUDA random numbers) has no sequence:

    four random 32-bit words = philox(counter, key)

is a fixed function that scrambles a 128-bit *counter* under a 64-bit *key*
so thoroughly that consecutive counters give statistically independent
outputs.  Every thread computes its own numbers from its own counter, in
parallel, and the same (counter, key) always gives the same words.

**What goes in.**  key = the seed.  counter = (thread index t, call number):
words 0-1 hold ``t``, words 2-3 hold the generator's ``offset``, which
counts the calls made since ``manual_seed`` (each call uses one offset and
moves it on by one).  So two calls never share a counter, the same seed
replays the same calls, and the numbers of one call do not depend on how
many threads or blocks the GPU schedules -- only on each element's index.
(The numbers are not torch's: torch lays its counters out differently.)

**Thread layout.**  Thread ``t = cuda.grid(1)`` makes one philox call and
turns its four words into the elements ``t*PER ... t*PER + PER-1`` of the
C-contiguous output: PER = 4 for float32 (24 random bits each) and 2 for
float64 (53 bits each, from two words).  No thread writes another's elements.

From uniform bits to distributions:

* uniform [0, 1): the top 24 (float32) / 53 (float64) bits times 2^-24 / 2^-53
  -- every value is a multiple of that step, and 1.0 itself never occurs;
* normal: Box-Muller turns two uniforms u1, u2 into two independent normals,
  sqrt(-2 ln(1 - u1)) * (cos, sin)(2 pi u2)  (1 - u1 is in (0, 1]: no log 0);
* bernoulli(p): 1 where a uniform is below p, else 0.
"""
import math

import numpy as np

from .array import CudaArray
from .driver import launch, numba_cuda

cuda = numba_cuda()

# Philox4x32 constants (Random123): the two multipliers, and the two "Weyl" increments
# that change the key from round to round (golden ratio and sqrt(3) - 1, as 32-bit fractions).
# They are numpy uint64 so that every operation below stays in unsigned 64-bit integers.
PHILOX_M0 = np.uint64(0xD2511F53)
PHILOX_M1 = np.uint64(0xCD9E8D57)
PHILOX_W0 = np.uint64(0x9E3779B9)
PHILOX_W1 = np.uint64(0xBB67AE85)
LOW32 = np.uint64(0xFFFFFFFF)
SHIFT32 = np.uint64(32)
ROUNDS = 10

# uint -> float scaling: 24 random bits for float32, 53 for float64
SHIFT8, SHIFT5, SHIFT6 = np.uint64(8), np.uint64(5), np.uint64(6)
TWO_POW_M24 = 2.0 ** -24
TWO_POW_M53 = 2.0 ** -53
TWO_POW_26 = 2.0 ** 26
TWO_PI = 2.0 * math.pi

UNIFORM, NORMAL = 0, 1


@cuda.jit(device=True)
def philox4x32(c0, c1, c2, c3, k0, k1, words):
    """Write philox4x32-10(counter = (c0, c1, c2, c3), key = (k0, k1)) into ``words`` (4 uint64).

    Every argument holds a 32-bit value in a uint64.  One round multiplies two
    counter words by the constants (a 32 x 32 -> 64-bit product: its low and
    high halves), mixes the high halves with the other words and the key by
    xor, and swaps the words around; ten rounds, bumping the key between them.
    """
    for _ in range(ROUNDS):
        p0 = PHILOX_M0 * c0   # < 2**64: both factors are below 2**32
        p1 = PHILOX_M1 * c2
        hi0, lo0 = p0 >> SHIFT32, p0 & LOW32
        hi1, lo1 = p1 >> SHIFT32, p1 & LOW32
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0 = (k0 + PHILOX_W0) & LOW32
        k1 = (k1 + PHILOX_W1) & LOW32
    words[0], words[1], words[2], words[3] = c0, c1, c2, c3


@cuda.jit(device=True)
def uniform(words, k, double):
    """The k-th uniform number in [0, 1) of a thread's four words (as a float64)."""
    if double:  # 27 + 26 = 53 bits from words 2k and 2k + 1
        return ((words[2 * k] >> SHIFT5) * TWO_POW_26 + (words[2 * k + 1] >> SHIFT6)) * TWO_POW_M53
    return (words[k] >> SHIFT8) * TWO_POW_M24


@cuda.jit
def philox_fill(out, n, distribution, double, k0, k1, o0, o1, a, b):
    """Fill the flat, C-contiguous ``out`` (n elements) with random numbers.

    Thread layout: thread t makes elements t*PER .. t*PER + PER - 1 (PER = 2
    if ``double`` else 4) from counter (t, offset) -- see the module docstring.
    ``distribution`` is UNIFORM (values a + (b - a) * u, in [a, b)) or NORMAL
    (values a + b * z, mean a and standard deviation b).
    """
    t = cuda.grid(1)
    per = 2 if double else 4
    if t * per >= n:
        return
    words = cuda.local.array(4, np.uint64)
    tt = np.uint64(t)
    philox4x32(tt & LOW32, tt >> SHIFT32, o0, o1, k0, k1, words)
    if distribution == UNIFORM:
        for k in range(per):
            i = t * per + k
            if i < n:
                out[i] = a + (b - a) * uniform(words, k, double)
    else:  # Box-Muller: uniforms (2m, 2m + 1) -> normals (2m, 2m + 1)
        for m in range(per // 2):
            radius = math.sqrt(-2.0 * math.log(1.0 - uniform(words, 2 * m, double)))
            angle = TWO_PI * uniform(words, 2 * m + 1, double)
            i = t * per + 2 * m
            if i < n:
                out[i] = a + b * (radius * math.cos(angle))
            if i + 1 < n:
                out[i + 1] = a + b * (radius * math.sin(angle))


@cuda.jit
def philox_bernoulli(out, n, p, p_step, double, k0, k1, o0, o1):
    """out[i] = 1 if a uniform number is below p[i * p_step] else 0 (``p_step`` 0: one p).

    Thread layout as ``philox_fill``: thread t writes elements t*PER .. t*PER + PER - 1.
    """
    t = cuda.grid(1)
    per = 2 if double else 4
    if t * per >= n:
        return
    words = cuda.local.array(4, np.uint64)
    tt = np.uint64(t)
    philox4x32(tt & LOW32, tt >> SHIFT32, o0, o1, k0, k1, words)
    for k in range(per):
        i = t * per + k
        if i < n:
            out[i] = 1 if uniform(words, k, double) < p[i * p_step] else 0


# ---------------------------------------------------------------- the generator's state
class PhiloxGenerator:
    """The state of the GPU's random numbers: a seed (the key) and an offset (calls made)."""

    def __init__(self, seed=67280421310721):
        self.manual_seed(seed)

    def manual_seed(self, seed):
        """Start over from ``seed``: the same seed gives the same numbers, call for call."""
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise RuntimeError(f"Overflow when unpacking long: a seed must fit in 64 bits "
                               f"(got {seed})")
        self.seed, self.offset = seed % 2 ** 64, 0
        return self

    def initial_seed(self):
        return self.seed

    def get_state(self):
        return (self.seed, self.offset)

    def set_state(self, state):
        self.seed, self.offset = (int(v) for v in state)
        return self

    def next_counter(self):
        """(key words, offset words) for one call, then move the offset on."""
        key = (np.uint64(self.seed & 0xFFFFFFFF), np.uint64(self.seed >> 32))
        offset = (np.uint64(self.offset & 0xFFFFFFFF), np.uint64(self.offset >> 32))
        self.offset += 1
        return key + offset


# torch's default seed, until ``seed_from`` (the first GPU draw, through learntorch.factories)
# seeds it like the cpu's default generator, so that learntorch.manual_seed(s) called before
# the first cuda tensor seeds this one too (later calls reach it through learntorch.random)
default_generator = PhiloxGenerator(67280421310721)
_seeded = False


def seed_from(initial_seed):
    """Seed the default generator with the cpu's seed, once, unless it was seeded already."""
    global _seeded
    if not _seeded:
        default_generator.manual_seed(initial_seed)
        _seeded = True


def manual_seed(seed):
    """Seed the GPU's default generator (what ``learntorch.cuda.manual_seed`` calls)."""
    global _seeded
    default_generator.manual_seed(seed)
    _seeded = True


# ---------------------------------------------------------------- filling arrays
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check_float(out, what):
    if not isinstance(out, CudaArray):
        raise TypeError(f"{what} fills a cuda array, got {type(out).__name__}")
    if out.dtype not in _FLOATS:
        raise RuntimeError(f"\"{what}\" not implemented for dtype {out.dtype} on cuda: random "
                           "numbers are made as float32 or float64; make them in one of those "
                           "and convert, e.g. .to(torch.float16)")
    if not out._is_c_contiguous():
        raise RuntimeError(f"{what} fills C-contiguous arrays only (got shape {out.shape}, "
                           f"strides {out.strides}); fill a contiguous copy and copy it back")


def _launch(kernel, out, generator):
    double = out.dtype == np.float64
    per = 2 if double else 4
    threads = (out.size + per - 1) // per
    return launch(kernel, threads), double, (generator or default_generator).next_counter()


def uniform_(out, low=0.0, high=1.0, generator=None):
    """Fill ``out`` with numbers uniform in [low, high), in place; returns ``out``."""
    _check_float(out, "uniform_")
    if out.size:
        kernel, double, counter = _launch(philox_fill, out, generator)
        kernel(out._flat(), out.size, UNIFORM, double, *counter, float(low), float(high))
    return out


def normal_(out, mean=0.0, std=1.0, generator=None):
    """Fill ``out`` with normal numbers of mean ``mean`` and standard deviation ``std``."""
    _check_float(out, "normal_")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if out.size:
        kernel, double, counter = _launch(philox_fill, out, generator)
        kernel(out._flat(), out.size, NORMAL, double, *counter, float(mean), float(std))
    return out


def bernoulli_(out, p=0.5, generator=None):
    """Fill ``out`` with 0/1: each element is 1 with probability ``p``.

    ``p`` is a number, or a CudaArray of probabilities with ``out``'s shape
    (``torch.bernoulli(probabilities)``).
    """
    _check_float(out, "bernoulli_")
    if isinstance(p, CudaArray):
        if p.shape != out.shape:
            raise RuntimeError(f"bernoulli_: the probabilities have shape {p.shape} but the "
                               f"output has shape {out.shape}; they must match")
        probabilities, step = (p if p._is_c_contiguous() else p.copy())._flat(), 1
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        probabilities, step = cuda.to_device(np.array([p], dtype=np.float64)), 0
    if out.size:
        kernel, double, counter = _launch(philox_bernoulli, out, generator)
        kernel(out._flat(), out.size, probabilities, step, double, *counter)
    return out


def rand(shape, dtype=np.float32, generator=None):
    """A new CudaArray of ``shape`` uniform in [0, 1) (``torch.rand(..., device='cuda')``)."""
    return uniform_(CudaArray.empty(shape, dtype), generator=generator)


def randn(shape, dtype=np.float32, generator=None):
    """A new CudaArray of ``shape`` of standard normal numbers (``torch.randn``)."""
    return normal_(CudaArray.empty(shape, dtype), generator=generator)
