"""What runs inside a DataLoader worker process.

A worker is a loop: receive ``(task_id, indices)`` from its own *index pipe*,
fetch those samples from its copy of the dataset, collate them, and put
``(task_id, batch)`` on the *result queue* that all workers share.  The main
process puts the batches back in task order (``dataloader.py``).  ``None`` on
the index pipe, or the pipe being closed, means "stop".

Three things make workers trustworthy:

* **Seeding.**  Forked workers start as copies of the main process, random
  state included: without reseeding, every worker would make the *same*
  "random" augmentations.  So each worker seeds itself from the loader's base
  seed (drawn once per epoch in the main process, from the loader's generator):
  ``seed = base_seed + worker_id`` seeds learntorch's default generator and
  Python's ``random``; numpy's global generator gets a state mixed from both
  numbers (``np.random.seed`` takes only 32-bit words, and plain
  ``base_seed + worker_id`` truncated to 32 bits could repeat across epochs).
  This is torch's scheme, so ``manual_seed`` makes runs with workers repeatable.
* **Errors travel.**  An exception while fetching is caught, its type and
  formatted traceback are sent as an ``ExceptionWrapper``, and the main process
  raises the same type with the worker's traceback in the message.
* **No orphans.**  A worker checks every second whether its parent is still
  alive (``os.getppid()`` changes when the parent dies) and exits if not; the
  main process also sends ``None`` ("stop") and reaps every worker on shutdown.
"""
import os
import pickle
import random
import sys
import traceback

import numpy as np

# seconds between checks that the other side is still alive (torch uses 5: a
# shorter period reports a dead worker sooner, for one wake-up per second)
STATUS_CHECK_INTERVAL = 1.0

_worker_info = None


class WorkerInfo:
    """What a worker knows about itself: ``id``, ``num_workers``, ``seed`` and ``dataset``
    (this worker's own copy).  Read-only, as in torch."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id, num_workers, seed, dataset):
        for name, value in (("id", id), ("num_workers", num_workers), ("seed", seed),
                            ("dataset", dataset)):
            object.__setattr__(self, name, value)

    def __setattr__(self, key, val):
        raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


def get_worker_info():
    """Inside a DataLoader worker: its ``WorkerInfo``.  In the main process: None.

    Use it in an ``IterableDataset.__iter__`` to give each worker its share of the
    stream, or in ``worker_init_fn`` to set up each worker differently.
    """
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, as data that can cross a process boundary.

    The traceback object itself cannot be pickled, so it travels as text.
    """

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the worker's exception type here, its traceback text in the message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)  # KeyError would show repr(msg): one long line
        try:
            exception = self.exc_type(msg)
        except Exception:
            # a type whose constructor wants other arguments: keep the message at least
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class IterableDatasetStopIteration:
    """Sent by a worker whose copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; they echo it back."""


class _MapFetcher:
    """Samples of a map-style dataset: ``dataset[i]`` for each index of a batch."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, index):
        if self.auto_collation:
            if callable(getattr(self.dataset, "__getitems__", None)):
                data = self.dataset.__getitems__(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    """Samples of an iterable dataset: the next ``len(index)`` items of its iterator.

    A short last batch is returned (unless ``drop_last``); after that, or when
    nothing is left, ``fetch`` raises StopIteration.
    """

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def seed_worker(base_seed, worker_id):
    """Seed learntorch, ``random`` and numpy's global generator for worker ``worker_id``."""
    from ... import random as lt_random
    seed = base_seed + worker_id
    random.seed(seed)
    lt_random.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def send(data_queue, item, worker_id):
    """Pickle ``item`` here and put the bytes on the queue.

    ``Queue.put`` would pickle later, in a background thread, where an object that
    cannot be pickled is only printed and lost (and the main process would wait for
    it forever).  Pickling first turns that into an error the main process sees.
    """
    try:
        payload = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        task_id, data = item
        if isinstance(data, ExceptionWrapper):
            # an exception class defined inside a function cannot be pickled by name:
            # send a RuntimeError whose text still holds the original traceback
            data.exc_type = RuntimeError
        else:
            data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id} (sending "
                                          "a batch to the main process: it must be picklable)")
        payload = pickle.dumps((task_id, data), protocol=pickle.HIGHEST_PROTOCOL)
    data_queue.put(payload)


def receive(payload):
    return pickle.loads(payload)


def worker_loop(iterable, dataset, index_pipe, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                parent_pid):
    """The body of one worker process (see the module docstring)."""
    global _worker_info
    try:
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            # reported with the first task, so the main process raises it in order
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while os.getppid() == parent_pid:
            if not index_pipe.poll(STATUS_CHECK_INTERVAL):
                continue
            try:
                r = index_pipe.recv()
            except EOFError:  # the main process closed its end
                break
            if isinstance(r, ResumeIteration):
                # a new epoch for a persistent worker: a fresh iterator over the dataset
                send(data_queue, (r, None), worker_id)
                iteration_end = False
                try:
                    fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn,
                                             drop_last)
                except Exception:
                    init_exception = ExceptionWrapper(
                        where=f"in DataLoader worker process {worker_id}")
                continue
            if r is None:  # the main process says stop
                break
            if done_event.is_set() or iteration_end:
                continue  # shutting down, or nothing left to read: skip the stale task
            task_id, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data = IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process "
                                                      f"{worker_id}")
            send(data_queue, (task_id, data), worker_id)
            del data, index, r
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the whole process group; the main process handles it
    if done_event.is_set():
        # do not wait to flush results nobody will read
        data_queue.cancel_join_thread()
        data_queue.close()
