"""The caching allocator: freed device memory is kept and handed out again.

Asking the driver for memory (``cudaMalloc``) is slow -- it can synchronise
the whole device -- and a training loop frees and re-allocates the same sizes
every step.  So, as torch does, learntorch never gives memory back on its own:

* a request of ``nbytes`` is rounded up to a *bucket* size (a multiple of
  512 bytes, so that every dtype's alignment holds and near sizes share
  buckets);
* when the last array using a block dies, the block goes to the free list of
  its bucket instead of back to the driver;
* the next request for that bucket takes a block from the free list (no
  driver call); only an empty free list allocates.

Counters, as ``torch.cuda``'s: ``memory_allocated()`` is the bytes of blocks
held by live arrays, ``memory_reserved()`` adds the cached free blocks,
``empty_cache()`` returns the cached blocks to the driver.
``device_allocations`` counts real driver allocations (the tests check reuse
with it).
"""
import threading
import weakref

import numpy as np

from .driver import numba_cuda

ROUND = 512  # bytes: block sizes are multiples of this


def bucket_size(nbytes):
    """The block size serving a request of ``nbytes`` (at least one ROUND)."""
    return max(ROUND, -(-nbytes // ROUND) * ROUND)


class Block:
    """One allocation: ``memory`` is a 1-D uint8 device array of ``size`` bytes."""

    __slots__ = ("memory", "size", "__weakref__")

    def __init__(self, memory, size):
        self.memory, self.size = memory, size


class CachingAllocator:
    def __init__(self):
        self._free = {}          # bucket size -> list of free Blocks
        self._lock = threading.Lock()
        self.allocated_bytes = 0
        self.reserved_bytes = 0
        self.peak_allocated_bytes = 0
        self.device_allocations = 0

    def allocate(self, nbytes, owner):
        """A Block of at least ``nbytes``; it returns to the cache when ``owner`` is collected."""
        size = bucket_size(nbytes)
        with self._lock:
            cached = self._free.get(size)
            block = cached.pop() if cached else None
            if block is None:
                block = Block(numba_cuda().device_array(size, dtype=np.uint8), size)
                self.device_allocations += 1
                self.reserved_bytes += size
            self.allocated_bytes += size
            self.peak_allocated_bytes = max(self.peak_allocated_bytes, self.allocated_bytes)
        weakref.finalize(owner, self._release, block)
        return block

    def _release(self, block):
        with self._lock:
            self.allocated_bytes -= block.size
            self._free.setdefault(block.size, []).append(block)

    def empty_cache(self):
        """Give every cached (unused) block back to the driver."""
        with self._lock:
            for blocks in self._free.values():
                for block in blocks:
                    self.reserved_bytes -= block.size
            self._free.clear()


allocator = CachingAllocator()
