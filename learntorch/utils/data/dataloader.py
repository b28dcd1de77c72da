"""``DataLoader``: batches from a dataset, optionally loaded by worker processes.

One epoch, ``for batch in loader``:

1. the *index sampler* (a ``BatchSampler`` around a Sequential/RandomSampler,
   unless you pass your own) yields a list of indices per batch;
2. those samples are fetched (``dataset[i]`` for each index, or the next items
   of an ``IterableDataset``) and put together by ``collate_fn``
   (``default_collate``: see ``_collate.py``);
3. with ``num_workers=0`` that happens right here, in ``__next__``.  With
   ``num_workers=N`` it happens in N worker processes (``_worker.py``): the main
   process sends ``(task_id, indices)`` round robin down each worker's *index
   pipe*, keeping ``prefetch_factor * N`` tasks in flight, and reads finished
   batches from one shared *result queue*.  Results can arrive in any order;
   they are buffered and handed out in task order, so a loader with workers
   gives exactly the batches of ``num_workers=0``, in the same order.

Starting workers.  On Linux the workers are started with ``fork``: the child is
a copy of this process, so a dataset class defined in a notebook cell (which
lives in ``__main__``) just works, and nothing has to be pickled.  The
``spawn`` and ``forkserver`` methods start a fresh interpreter that must
*import* the dataset's class by name, and a notebook's ``__main__`` cannot be
imported: the worker dies with "Can't get attribute ... on <module '__main__'>".
Where fork is unavailable or unsafe (Windows; macOS, whose system libraries are
not fork-safe) the platform's default (``spawn``) is the fallback: there, define
datasets, ``collate_fn`` and ``worker_init_fn`` in a ``.py`` file and import them.
``multiprocessing_context=`` overrides the choice, as in torch.  (learntorch's
Numba kernels are not fork-safe after use; forked workers compute with numpy
instead -- see ``learntorch/backends/numba_cpu/loader.py``.  Python 3.12+ warns
when a process with threads forks, because a lock held by another thread stays
locked in the child; torch's DataLoader forks in the same way, and the workers
only run dataset code and start queues of their own.)

Randomness.  Each epoch draws a ``base_seed`` from ``generator`` (default: the
global generator) even with ``num_workers=0``, exactly as torch does: the
shuffled order is then the same with and without workers, and each worker seeds
itself with ``base_seed + worker_id`` (``_worker.py``), so random augmentations
repeat after ``learntorch.manual_seed``.

Shutting down.  Workers stop when the epoch ends, when the iterator is garbage
collected (a ``break`` out of the loop), or at interpreter exit; each one is
joined (and terminated if it does not stop in time), so none is left behind as a
zombie.  ``persistent_workers=True`` keeps them alive across epochs instead.

Batches travel between processes by pickling (tensors pickle by value).  torch
moves them through shared memory instead, which saves a copy; for the small
datasets of this course the copy does not matter.
"""
import atexit
import itertools
import math
import multiprocessing
import os
import queue
import sys
import time
import warnings
import weakref

from . import _worker
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import SequentialSampler, RandomSampler, BatchSampler, Sampler, _draw_seed


class _InfiniteConstantSampler(Sampler):
    """The 'sampler' of an IterableDataset: the dataset decides what comes next."""

    def __iter__(self):
        while True:
            yield None


def _default_context():
    """fork where it is available and safe (Linux); the platform's default elsewhere."""
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _usable_cpus():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


class DataLoader:
    """Iterate over ``dataset`` in batches (``torch.utils.data.DataLoader``).

    ``batch_size`` samples per batch (``None``: no batching, samples one by one);
    ``shuffle=True`` gives a new random order every epoch; ``sampler`` /
    ``batch_sampler`` choose the indices yourself; ``drop_last`` drops a last,
    smaller batch; ``num_workers`` loads in that many processes; ``timeout``
    (seconds, workers only) bounds the wait for one batch.  See the module
    docstring for how workers, seeding and shutdown work.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        self._iterable_dataset = isinstance(dataset, IterableDataset)
        if self._iterable_dataset:
            # the stream decides its own order: nothing to shuffle or sample
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            # a batch_sampler already decides batch size, order and the last batch
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._iterable_dataset:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        self.check_worker_number_rationality()

    # ----------------------------------------------------------------- settings
    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                valid = multiprocessing.get_all_start_methods()
                if context not in valid:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {valid!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context "
                                f"object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, attr, val):
        # the samplers were built from these at construction: changing one later would be
        # silently ignored, so it is refused
        if getattr(self, "_initialized", False) and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # what the iterator asks for indices: whole batches, or single indices
        return self.batch_sampler if self._auto_collation else self.sampler

    def check_worker_number_rationality(self):
        """Warn when there are more workers than CPUs: they would only take turns."""
        if not self.num_workers:
            return
        cpus = _usable_cpus()
        if cpus is None or self.num_workers > cpus:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. Our suggested max number of worker in current system is "
                          f"{cpus}, which is smaller than what this DataLoader is going to "
                          "create. Please be aware that excessive worker creation might get "
                          "DataLoader running slow or even freeze, lower the worker number to "
                          "avoid potential slowness/freeze if necessary.", stacklevel=2)

    # ---------------------------------------------------------------- iteration
    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._iterable_dataset:
            # the stream's own len (a TypeError if it has none), in batches
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = (length // self.batch_size if self.drop_last
                          else math.ceil(length / self.batch_size))
            return length
        return len(self._index_sampler)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable_dataset = loader._iterable_dataset
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory:
            from ... import cuda
            if not cuda.is_available():
                warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                              "then device pinned memory won't be used.", stacklevel=3)
            # learntorch has no page-locked host memory: with CUDA it is a no-op too
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # drawn even without workers, so that the generator advances the same way and
        # the shuffled order does not depend on num_workers (see the module docstring)
        self._base_seed = _draw_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # StopIteration ends the epoch

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._iterable_dataset and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called} (when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker (use "
                        "get_worker_info() to give each worker its own share).")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError(f"timeout={self._timeout} needs worker processes: it bounds the "
                                 "wait for a worker's batch. With num_workers=0 use timeout=0 "
                                 "(torch: _SingleProcessDataLoaderIter requires timeout == 0)")
        self._dataset_fetcher = _worker.create_fetcher(
            self._iterable_dataset, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration (a stream ended)


# iterators whose workers are alive, shut down at exit before multiprocessing's own
# exit handler terminates daemonic processes abruptly
_live_iterators = weakref.WeakSet()
_python_exiting = False


@atexit.register
def _shutdown_at_exit():
    global _python_exiting
    for it in list(_live_iterators):
        it._shutdown_workers()
    _python_exiting = True


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Batches loaded by worker processes, handed out in order (module docstring)."""

    def __init__(self, loader):
        self._shutdown = False  # first: __del__ must work even if starting workers fails
        self._workers = []
        self._index_pipes = []
        self._owner_pid = os.getpid()
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        context = loader.multiprocessing_context or _default_context()
        self._start_method = context.get_start_method()
        self._worker_result_queue = context.Queue()
        self._data_queue = self._worker_result_queue
        self._workers_done_event = context.Event()
        self._workers_status = []
        for worker_id in range(self._num_workers):
            # A one-way pipe, not a Queue, carries the indices: a pipe writes at once, where
            # a Queue hands its data to a background thread -- which may already be gone
            # when a garbage-collected iterator sends its workers the final "stop".
            reader, writer = context.Pipe(duplex=False)
            w = context.Process(
                target=_worker.worker_loop,
                args=(self._iterable_dataset, self._dataset, reader,
                      self._worker_result_queue, self._workers_done_event,
                      self._auto_collation, self._collate_fn, self._drop_last,
                      self._base_seed, loader.worker_init_fn, worker_id, self._num_workers,
                      os.getpid()),
                daemon=True)  # never outlive this process, even if shutdown is skipped
            w.start()
            reader.close()  # the worker has its own copy; ours would hide the worker's end
            self._index_pipes.append(writer)
            self._workers.append(w)
            self._workers_status.append(True)
        _live_iterators.add(self)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0      # id of the next task to send
        self._rcvd_idx = 0      # id of the next task to hand out
        # task id -> (worker_id,) while in flight, (worker_id, data) once arrived early
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: start a new epoch; results of the old one that are still
            # on their way come before each worker's acknowledgement and are dropped
            for worker_id in range(self._num_workers):
                self._send(worker_id, _worker.ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                task_id, _ = self._get_data()
                if isinstance(task_id, _worker.ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # -------------------------------------------------------------- receiving
    def _try_get_data(self, timeout=_worker.STATUS_CHECK_INTERVAL):
        """(True, item) from the result queue, or (False, None) after ``timeout`` seconds --
        unless a worker has died, which is an error."""
        try:
            return True, _worker.receive(self._data_queue.get(timeout=timeout))
        except queue.Empty:
            pass
        failed = [w for wid, w in enumerate(self._workers)
                  if self._workers_status[wid] and not w.is_alive()]
        if failed:
            for wid, w in enumerate(self._workers):
                if w in failed:
                    self._mark_worker_as_unavailable(wid)
            pids = ", ".join(str(w.pid) for w in failed)
            codes = ", ".join(str(w.exitcode) for w in failed)
            hint = ""
            if self._start_method != "fork":
                hint = (f" With the '{self._start_method}' start method the dataset, collate_fn "
                        "and worker_init_fn must be importable from a .py file (not defined in "
                        "a notebook or __main__); the worker's own error is printed above.")
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly (exit "
                               f"code(s) {codes}).{hint}")
        return False, None

    def _get_data(self):
        if self._timeout > 0:
            deadline = time.monotonic() + self._timeout
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                ok, data = self._try_get_data(min(remaining, _worker.STATUS_CHECK_INTERVAL))
                if ok:
                    return data
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self):
        while True:
            # skip tasks that will never come: their worker's stream ended
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break  # has arrived, or still can
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # it arrived early: hand it out
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            task_id, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._iterable_dataset and isinstance(data, _worker.IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task_id != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(task_id)[0]
                    return self._process_data(data, worker_id)
                self._task_info[task_id] += (data,)  # keep it until its turn
            else:
                worker_id = self._task_info.pop(task_id)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _process_data(self, data, worker_id):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()  # one out, one in: keep the pipeline full
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    # ---------------------------------------------------------------- sending
    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker that is still active
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                if self._in_order:
                    break
                if self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status):
                    break
        else:
            return  # every stream has ended
        self._send(worker_id, (self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _send(self, worker_id, message):
        try:
            self._index_pipes[worker_id].send(message)
        except OSError:
            pass  # that worker has died: _try_get_data reports it

    # --------------------------------------------------------------- shutdown
    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        self._send(worker_id, None)  # "stop" for that worker
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        # a forked child holds a copy of this object: only the process that started the
        # workers may stop them
        if self._shutdown or _python_exiting or os.getpid() != self._owner_pid:
            return
        self._shutdown = True
        _live_iterators.discard(self)
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for pipe in self._index_pipes:
                pipe.close()  # end of file (once no copy is open) also means "stop"
            # one grace period for all workers together, not one each
            deadline = time.monotonic() + _worker.STATUS_CHECK_INTERVAL
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            self._worker_result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():  # stuck in a slow __getitem__: stop it anyway
                    w.terminate()
                    w.join(timeout=_worker.STATUS_CHECK_INTERVAL)
                if w.is_alive():
                    w.kill()
                    w.join()

    def __del__(self):
        self._shutdown_workers()
