"""The reducer: averages the gradients of DDP's buckets while backward is still running.

For each parameter it registers a hook that backward calls once the
parameter's ``.grad`` holds this backward's whole gradient
(``Tensor.register_post_accumulate_grad_hook``).  When the last gradient of a
bucket arrives, the bucket is launched:

1. its gradients are copied, one after the other, into one flat buffer and
   divided by the world size (as torch does, so the sum is the average);
2. a **non-blocking** all-reduce (MPI's ``Iallreduce``) of the buffer starts --
   and backward goes on computing the gradients of earlier layers, so the
   communication overlaps with the computation; every later hook asks MPI to
   make progress on the buckets in flight (``is_completed``);
3. when the last hook of the backward has fired, the reducer waits for every
   bucket in turn and writes the averages back into the parameters' ``.grad``,
   before ``loss.backward()`` returns -- so the optimizer reads averaged grads.

Every rank must launch the same buckets in the same order (MPI matches
collectives by order), so buckets are launched strictly in their index order:
a bucket that becomes ready early waits for the ones before it.

``events`` records what happened during the last backward, in order:
``("ready", name)``, ``("launch", bucket)``, ``("done", bucket)``; it shows the
overlap (a launch before the last "ready").
"""
import numpy as np

from ... import from_numpy, no_grad
from ...distributed._collectives import all_reduce_array
from ...distributed._reduce_op import ReduceOp


class Bucket:
    """Parameters whose gradients are all-reduced together, in one flat buffer."""

    def __init__(self, index, params, names):
        self.index = index
        self.params = params
        self.names = names
        self.offsets = np.cumsum([0] + [p.numel() for p in params]).tolist()
        self.numel = self.offsets[-1]
        self.dtype = params[0].detach().numpy().dtype
        self.pending = set()   # ids of the parameters whose gradient has not arrived yet
        self.buffer = None
        self.work = None

    def __repr__(self):
        return f"Bucket({self.index}: {', '.join(self.names)}; {self.numel} elements)"


class Reducer:
    def __init__(self, named_params, bucket_indices, process_group,
                 find_unused_parameters=False):
        self.pg = process_group
        self.find_unused_parameters = find_unused_parameters
        params = [p for _, p in named_params]
        names = [n for n, _ in named_params]
        self.buckets = [Bucket(i, [params[j] for j in indices], [names[j] for j in indices])
                        for i, indices in enumerate(bucket_indices)]
        self._bucket_of = {id(p): b for b in self.buckets for p in b.params}
        self._name_of = {id(p): n for n, p in named_params}
        self.armed = False          # this backward must average (set by prepare_for_backward)
        self.next_to_launch = 0
        self.unused = []            # names of parameters marked unused for this backward
        self.events = []
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]

    # -- each iteration: DDP.forward arms the reducer, the hooks do the rest
    def prepare_for_backward(self, unused_params=()):
        self.check_previous_finished()
        if self.armed:  # a forward whose backward never ran: finish what it started
            self._abandon()
        self.events = []
        self.next_to_launch = 0
        for bucket in self.buckets:
            bucket.pending = {id(p) for p in bucket.params}
            bucket.buffer, bucket.work = None, None
        self.armed = True
        self.unused = [self._name_of[id(p)] for p in unused_params]
        for p in unused_params:  # their gradients will never arrive: count them as zeros
            self._mark_ready(p)

    def check_previous_finished(self):
        """torch's error when the last backward left buckets unreduced (a parameter that got no
        gradient, without find_unused_parameters=True)."""
        if not self.armed or not any(e[0] == "ready" for e in self.events):
            return
        missing = [self._name_of[i] for b in self.buckets for i in b.pending]
        self._abandon()
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new "
            "one. This error indicates that your module has parameters that were not used in "
            "producing loss. You can enable unused parameter detection by passing the keyword "
            "argument `find_unused_parameters=True` to "
            "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
            "function outputs participate in calculating loss.  Parameters which did not "
            f"receive grad for rank {self.pg.rank()}: {', '.join(missing)}")

    def _abandon(self):
        for bucket in self.buckets:
            if bucket.work is not None:
                bucket.work.wait()  # an MPI request must complete before its buffer goes
        self.armed = False

    # -- the hook
    def _grad_ready(self, param):
        if not self.armed:
            return  # no_sync(), or no forward through DDP with grad enabled
        self.events.append(("ready", self._name_of[id(param)]))
        self._mark_ready(param)
        for bucket in self.buckets[:self.next_to_launch]:
            if bucket.work is not None:
                bucket.work.is_completed()  # lets MPI move the buckets in flight along
        if self.next_to_launch == len(self.buckets):
            self._finish()

    def _mark_ready(self, param):
        bucket = self._bucket_of[id(param)]
        bucket.pending.discard(id(param))
        while (self.next_to_launch < len(self.buckets)
               and not self.buckets[self.next_to_launch].pending):
            self._launch(self.buckets[self.next_to_launch])
            self.next_to_launch += 1

    def _launch(self, bucket):
        buffer = np.empty(bucket.numel, dtype=bucket.dtype)
        for p, start, stop in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
            if p.grad is None:
                buffer[start:stop] = 0  # an unused parameter adds nothing to the sum
            else:
                buffer[start:stop] = p.grad.detach().numpy().reshape(-1)
        # divide before summing, as torch: the all-reduce's sum is then the average
        np.divide(buffer, self.pg.size(), out=buffer)
        bucket.buffer = buffer
        bucket.work = all_reduce_array(self.pg, buffer, ReduceOp.SUM, async_op=True)
        self.events.append(("launch", bucket.index))

    def _finish(self):
        self.armed = False
        used_somewhere = self._used_anywhere()
        with no_grad():
            for bucket in self.buckets:
                bucket.work.wait()
                self.events.append(("done", bucket.index))
                for p, start, stop in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
                    if not used_somewhere.get(id(p), True):
                        continue  # no rank used it: its grad stays as it was (None), as torch
                    average = from_numpy(bucket.buffer[start:stop].reshape(tuple(p.shape)))
                    if p.grad is None:
                        p.grad = average.clone()
                    else:
                        p.grad.copy_(average)
            for bucket in self.buckets:
                bucket.buffer, bucket.work = None, None

    def _used_anywhere(self):
        """{id(param): used by some rank}, from one small all-reduce of "used here" flags;
        {} (everything used) without find_unused_parameters, where all ranks use all."""
        if not self.find_unused_parameters:
            return {}
        params = [p for b in self.buckets for p in b.params]
        unused = set(self.unused)
        flags = np.array([self._name_of[id(p)] not in unused for p in params], dtype=np.uint8)
        all_reduce_array(self.pg, flags, ReduceOp.MAX, async_op=False)
        return {id(p): bool(f) for p, f in zip(params, flags)}

    def remove_hooks(self):
        for handle in self._hooks:
            handle.remove()
        self._hooks = []
