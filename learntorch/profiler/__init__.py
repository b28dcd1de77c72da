"""``learntorch.profiler``: where the time of a training step goes, op by op.

The same shape as ``torch.profiler``::

    from learntorch.profiler import profile, record_function

    with profile(record_shapes=True) as prof:
        with record_function("train_step"):
            loss = model(x).pow(2).mean()
            loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

Each differentiable op is recorded twice: its forward under the op's name
(``Mul``, ``Linear``, ``Softmax``: its node's name without ``Backward0``) and its backward
under the graph node's name (``MulBackward0``), so the table answers "is my
step slow in the forward or in the backward, and in which op?".  *Self* time
excludes the ops an op called; *total* includes them.

Profiling costs nothing when it is off: ``profile()`` swaps timing wrappers in
for ``Function.apply`` and ``BackwardNode.apply`` on entry and puts the
originals back on exit.
"""
from ._events import ProfilerActivity
from ._recorder import profile, record_function

__all__ = ["profile", "record_function", "ProfilerActivity"]
