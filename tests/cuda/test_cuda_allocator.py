"""The caching allocator: freed blocks are reused, and torch.cuda's memory counters."""
import gc

import learntorch
from learntorch.backends.cuda.allocator import allocator, bucket_size


def test_a_freed_block_is_reused_without_a_new_device_allocation():
    gc.collect()
    learntorch.cuda.empty_cache()
    before = allocator.device_allocations
    for _ in range(5):  # the same size, again and again, as in a training loop
        t = learntorch.ones(100, device="cuda")
        del t
    assert allocator.device_allocations - before == 1


def test_memory_allocated_counts_live_tensors_and_reserved_keeps_freed_blocks():
    gc.collect()
    learntorch.cuda.empty_cache()
    base = learntorch.cuda.memory_allocated()
    t = learntorch.zeros(1000, device="cuda")  # 4000 bytes -> a 4096-byte block
    assert learntorch.cuda.memory_allocated() - base == bucket_size(4000) == 4096
    assert learntorch.cuda.memory_reserved() >= learntorch.cuda.memory_allocated()
    del t
    gc.collect()
    assert learntorch.cuda.memory_allocated() == base
    assert learntorch.cuda.memory_reserved() >= base + 4096  # cached, not returned
    learntorch.cuda.empty_cache()
    assert learntorch.cuda.memory_reserved() == learntorch.cuda.memory_allocated()


def test_views_keep_their_block_alive():
    gc.collect()
    base = learntorch.cuda.memory_allocated()
    t = learntorch.arange(10.0, device="cuda")
    view = t[2:5]
    del t
    gc.collect()
    assert learntorch.cuda.memory_allocated() > base  # the view still uses the block
    assert view.cpu().tolist() == [2.0, 3.0, 4.0]
