"""DataLoader with worker processes: same batches, seeding, errors, shutdown.

The oracle for what a loader with workers yields is the same loader with
``num_workers=0`` (and, where it is cheap, torch's loader with workers): the
batches must be the same, in the same order.  Seeding is checked against its
definition (each worker seeds learntorch, ``random`` and numpy from
``base_seed + worker_id``), shutdown against the operating system (after a
``break`` or ``del``, no worker process is left, not even as a zombie).

Datasets are module-level classes so that every start method could pickle them.
"""
import gc
import multiprocessing
import os
import random
import sys
import threading
import time

import numpy as np
import pytest

import learntorch
from learntorch.utils import data as ltdata
from learntorch.datasets import transforms as T
from oracle import require_torch, torch
from test_data_collate import assert_same

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork (POSIX)")


class Squares(ltdata.Dataset):
    def __init__(self, n=20):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i, np.array([i, i * i])


class WhoAmI(ltdata.Dataset):
    """Each sample reports the worker that made it and the first random numbers it drew."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = ltdata.get_worker_info()
        return {"index": i, "pid": os.getpid(),
                "worker": -1 if info is None else info.id,
                "seed": -1 if info is None else info.seed,
                "learntorch": learntorch.rand(1).item(),
                "numpy": float(np.random.rand()), "random": random.random()}


class Failing(ltdata.Dataset):
    def __init__(self, error, bad_index=5):
        self.error, self.bad_index = error, bad_index

    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == self.bad_index:
            raise self.error
        return i


class Slow(ltdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(30 if i == 0 else 0)
        return i


class Dies(ltdata.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 2:
            os._exit(3)  # a crash that no exception handler sees (like a segfault)
        return i


class Pids(ltdata.Dataset):
    def __len__(self):
        return 40

    def __getitem__(self, i):
        return os.getpid()


class Unpicklable(ltdata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return lambda: i  # a batch must travel by pickle


class NeedsTwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


def sharded_stream(base, get_info, n=10):
    """An iterable dataset that gives each worker its own share (torch's documented recipe)."""
    class Shards(base):
        def __iter__(self):
            info = get_info()
            if info is None:
                return iter(range(n))
            return iter(range(info.id, n, info.num_workers))
    return Shards()


class Unsharded(ltdata.IterableDataset):
    def __iter__(self):
        return iter(range(5))


def batches(loader):
    return [b for b in loader]


def pid_gone(pid):
    """True when ``pid`` is no longer a process, not even a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/status") as f:
            state = next(line for line in f if line.startswith("State:"))
    except FileNotFoundError:
        return True
    return False  # alive, or a zombie nobody has reaped


def wait_gone(pids, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(pid_gone(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


needs_proc = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads process states from /proc")


@pytest.fixture(autouse=True)
def no_worker_outlives_its_test():
    """Every test here, errors included, leaves no worker behind once its garbage is collected."""
    before = {p.pid for p in multiprocessing.active_children()}
    yield
    gc.collect()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = [p for p in multiprocessing.active_children() if p.pid not in before]
        if not left:
            return
        time.sleep(0.05)
    pytest.fail(f"worker processes left behind: {left}")


# ------------------------------------------------------------ the same batches
@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=1), dict(batch_size=None),
                                    dict(batch_size=4, shuffle=True)])
def test_workers_give_the_batches_of_num_workers_0_in_the_same_order(kwargs):
    learntorch.manual_seed(1)
    expected = batches(ltdata.DataLoader(Squares(), **kwargs))
    learntorch.manual_seed(1)
    got = batches(ltdata.DataLoader(Squares(), num_workers=2, **kwargs))
    assert_same_batches(got, expected)


def plain(x):
    """A batch as plain Python values, tensors tagged with their dtype."""
    if isinstance(x, (learntorch.Tensor, np.ndarray)):
        return (type(x).__name__, str(x.dtype), x.tolist())
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


def assert_same_batches(got, expected):
    assert plain(got) == plain(expected)


def test_worker_batches_equal_torchs_worker_batches():
    require_torch()
    lt_batches = batches(ltdata.DataLoader(Squares(), batch_size=3, num_workers=2))
    th_batches = batches(torch.utils.data.DataLoader(Squares(), batch_size=3, num_workers=2))
    assert_same(lt_batches, th_batches)


def test_results_come_back_in_order_even_when_workers_finish_out_of_order():
    # worker 0 gets the slow first batch; worker 1's batches arrive before it
    class SlowFirst(ltdata.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            time.sleep(0.3 if i == 0 else 0)
            return i
    assert [b.tolist() for b in ltdata.DataLoader(SlowFirst(), batch_size=2, num_workers=2)] == \
        [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_a_loader_can_run_many_epochs_with_workers():
    loader = ltdata.DataLoader(Squares(6), batch_size=4, num_workers=2)
    for _ in range(3):
        assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]]


def test_workers_also_start_from_a_thread_that_is_not_the_main_thread():
    out = {}

    def run():
        out["batches"] = batches(ltdata.DataLoader(Squares(), batch_size=5, num_workers=2))
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert_same_batches(out["batches"], batches(ltdata.DataLoader(Squares(), batch_size=5)))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is the default on Linux")
def test_a_dataset_defined_where_pickle_cannot_find_it_works_like_in_a_notebook():
    # a class from a notebook cell lives in __main__, which a spawned worker cannot import;
    # a class local to this function cannot be pickled either -- forked workers need neither
    class CellDataset(ltdata.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return i * 10
    loader = ltdata.DataLoader(CellDataset(), batch_size=2, num_workers=2)
    assert [b.tolist() for b in loader] == [[0, 10], [20, 30], [40]]
    assert ltdata.dataloader._default_context().get_start_method() == "fork"


def test_in_order_false_still_delivers_every_batch_once():
    loader = ltdata.DataLoader(Squares(), batch_size=3, num_workers=2, in_order=False)
    got = sorted(tuple(b[0].tolist()) for b in loader)
    assert got == [tuple(b[0].tolist()) for b in ltdata.DataLoader(Squares(), batch_size=3)]


def test_the_spawn_start_method_works_for_importable_datasets():
    x = learntorch.arange(10)
    loader = ltdata.DataLoader(ltdata.TensorDataset(x), batch_size=4, num_workers=1,
                               multiprocessing_context="spawn")
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


# ------------------------------------------------------------------- seeding
def worker_samples(seed, **kwargs):
    learntorch.manual_seed(seed)
    return [s for b in ltdata.DataLoader(WhoAmI(), batch_size=None, num_workers=2, **kwargs)
            for s in [b]]


def test_each_worker_seeds_learntorch_random_and_numpy_from_base_seed_plus_its_id():
    samples = worker_samples(0)
    seeds = {s["worker"]: s["seed"] for s in samples}
    assert sorted(seeds) == [0, 1]
    assert seeds[1] - seeds[0] == 1, "seed = base_seed + worker_id"
    for wid, seed in seeds.items():
        first = min((s for s in samples if s["worker"] == wid), key=lambda s: s["index"])
        g = learntorch.Generator().manual_seed(seed)
        assert first["learntorch"] == learntorch.rand(1, generator=g).item()
        assert first["random"] == random.Random(seed).random()
    by_worker = {wid: [s["numpy"] for s in samples if s["worker"] == wid] for wid in seeds}
    assert by_worker[0] != by_worker[1], "numpy must not repeat across workers"


def test_the_main_process_random_state_is_untouched_by_workers():
    learntorch.manual_seed(0)
    np.random.seed(0)
    expected_np = np.random.RandomState(0).rand()
    list(ltdata.DataLoader(WhoAmI(), num_workers=2))
    assert np.random.rand() == expected_np
    assert ltdata.get_worker_info() is None


def test_worker_random_numbers_repeat_after_manual_seed_and_change_with_it():
    def draws(seed):
        return sorted((s["index"], s["learntorch"], s["numpy"], s["random"])
                      for s in worker_samples(seed))
    assert draws(3) == draws(3)
    assert draws(3) != draws(4)


def test_each_epoch_draws_a_new_base_seed():
    learntorch.manual_seed(0)
    loader = ltdata.DataLoader(WhoAmI(), batch_size=None, num_workers=2)
    first, second = ({s["seed"] for s in loader} for _ in range(2))
    assert first != second


def test_random_augmentations_in_workers_are_reproducible():
    from learntorch.datasets import Digits
    augment = T.Compose([T.RandomCrop(8, padding=2), T.RandomHorizontalFlip()])
    data = ltdata.Subset(Digits(transform=augment), range(64))

    def epoch(seed, dataset):
        learntorch.manual_seed(seed)
        loader = ltdata.DataLoader(dataset, batch_size=16, shuffle=True, num_workers=2)
        images, labels = zip(*[(b[0].numpy(), b[1].numpy()) for b in loader])
        return np.concatenate(images), np.concatenate(labels)
    a, b, c = epoch(5, data), epoch(5, data), epoch(6, data)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    # the order comes from the main process, the augmentations from the workers: without
    # augmentation the same seed gives the same samples in the same order, unchanged
    plain = epoch(5, ltdata.Subset(Digits(), range(64)))
    assert np.array_equal(plain[1], a[1])
    changed = [not np.array_equal(x, y) for x, y in zip(a[0], plain[0])]
    assert sum(changed) > 48, "most images are shifted or flipped"


def test_worker_info_and_worker_init_fn():
    seen = []
    loader = ltdata.DataLoader(WhoAmI(), batch_size=None, num_workers=2,
                               worker_init_fn=lambda wid: np.random.seed(100 + wid))
    for s in loader:
        seen.append((s["worker"], s["numpy"]))
    firsts = {}
    for wid, value in seen:
        firsts.setdefault(wid, value)
    assert firsts == {w: np.random.RandomState(100 + w).rand() for w in (0, 1)}


def test_worker_info_is_read_only():
    class Probe(ltdata.Dataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            info = ltdata.get_worker_info()
            try:
                info.id = 5
            except RuntimeError as e:
                return str(e)
            return "assigned"
    assert list(ltdata.DataLoader(Probe(), batch_size=None, num_workers=1)) == \
        ["Cannot assign attributes to WorkerInfo objects"]


# ----------------------------------------------------------- iterable datasets
def test_sharded_stream_gives_every_item_once_like_torch():
    require_torch()
    lt = batches(ltdata.DataLoader(sharded_stream(ltdata.IterableDataset, ltdata.get_worker_info),
                                   batch_size=2, num_workers=2))
    th = batches(torch.utils.data.DataLoader(
        sharded_stream(torch.utils.data.IterableDataset, torch.utils.data.get_worker_info),
        batch_size=2, num_workers=2))
    assert_same(lt, th)
    assert sorted(x for b in lt for x in b.tolist()) == list(range(10))


def test_an_unsharded_stream_is_read_once_per_worker_as_in_torch():
    items = [x.item() for x in ltdata.DataLoader(Unsharded(), num_workers=2)]
    assert sorted(items) == sorted(list(range(5)) * 2)


# --------------------------------------------------------------------- errors
@pytest.mark.parametrize("error", [ValueError("bad pixel"), IndexError("no row 5"),
                                   KeyError("missing key")])
def test_a_worker_error_is_raised_with_its_type_traceback_and_worker_id(error):
    loader = ltdata.DataLoader(Failing(error), num_workers=2)
    with pytest.raises(type(error)) as caught:
        list(loader)
    message = str(caught.value)
    assert f"Caught {type(error).__name__} in DataLoader worker process 1" in message
    assert "Traceback (most recent call last)" in message and "__getitem__" in message
    assert str(error.args[0]) in message
    assert "\\n" not in message, "a KeyError's message stays readable"


def test_an_exception_that_cannot_be_rebuilt_becomes_a_runtime_error_with_the_text():
    with pytest.raises(RuntimeError, match="(?s)Caught NeedsTwoArgs.*Original Traceback"):
        list(ltdata.DataLoader(Failing(NeedsTwoArgs("x", "y")), num_workers=1))


def test_a_worker_init_fn_error_is_reported():
    def init(worker_id):
        raise ValueError(f"cannot open shard {worker_id}")
    with pytest.raises(ValueError, match="cannot open shard 0"):
        list(ltdata.DataLoader(Squares(), num_workers=1, worker_init_fn=init))


def test_a_batch_that_cannot_be_pickled_is_an_error_not_a_hang():
    with pytest.raises((TypeError, AttributeError, Exception),
                       match="(?s)sending a batch to the main process.*picklable"):
        list(ltdata.DataLoader(Unpicklable(), batch_size=None, num_workers=1, timeout=20))


def test_timeout_raises_when_a_batch_takes_too_long():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(ltdata.DataLoader(Slow(), num_workers=1, timeout=0.5))
    assert time.monotonic() - start < 10, "the stuck worker is terminated, not waited for"


def test_a_worker_that_dies_is_reported_with_its_pid():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly \(exit code\(s\) 3\)"):
        list(ltdata.DataLoader(Dies(), num_workers=1))


# ------------------------------------------------------------------- shutdown
@needs_proc
def test_breaking_out_of_the_loop_leaves_no_worker_process():
    pids = set()
    for batch in ltdata.DataLoader(Pids(), batch_size=2, num_workers=2):
        pids.update(batch.tolist())
        if len(pids) == 2:
            break
    assert len(pids) == 2
    assert wait_gone(pids), "workers (or zombies) left after break"


@needs_proc
def test_a_finished_epoch_and_a_collected_iterator_leave_no_worker_process():
    loader = ltdata.DataLoader(Pids(), batch_size=10, num_workers=2)
    pids = {p for b in loader for p in b.tolist()}
    assert len(pids) == 2 and wait_gone(pids)
    it = iter(loader)
    pids = set(next(it).tolist())
    del it
    gc.collect()
    assert wait_gone(pids)


@needs_proc
def test_an_error_or_timeout_leaves_no_worker_process():
    for dataset, kwargs in [(Failing(ValueError("x"), bad_index=0), {}),
                            (Slow(), dict(timeout=0.2))]:
        it = iter(ltdata.DataLoader(dataset, num_workers=2, **kwargs))
        pids = [w.pid for w in it._workers]
        with pytest.raises((ValueError, RuntimeError)):
            next(it)
        del it
        gc.collect()
        assert wait_gone(pids)


@needs_proc
def test_persistent_workers_survive_epochs_and_stop_with_the_loader():
    loader = ltdata.DataLoader(Pids(), batch_size=5, num_workers=2, persistent_workers=True)
    epochs = [{p for b in loader for p in b.tolist()} for _ in range(3)]
    assert epochs[0] == epochs[1] == epochs[2] and len(epochs[0]) == 2
    del loader
    gc.collect()
    assert wait_gone(epochs[0])


def test_persistent_workers_start_a_clean_epoch_after_an_early_stop():
    loader = ltdata.DataLoader(Squares(), batch_size=3, num_workers=2, persistent_workers=True)
    for _ in loader:
        break  # leaves batches in flight
    assert_same_batches(batches(loader), batches(ltdata.DataLoader(Squares(), batch_size=3)))


def test_persistent_workers_restart_a_stream_each_epoch():
    loader = ltdata.DataLoader(sharded_stream(ltdata.IterableDataset, ltdata.get_worker_info),
                               batch_size=2, num_workers=2, persistent_workers=True)
    for _ in range(2):
        assert sorted(x for b in loader for x in b.tolist()) == list(range(10))


def test_more_workers_than_cpus_warns_like_torch():
    too_many = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                else os.cpu_count()) + 1
    with pytest.warns(UserWarning, match=f"will create {too_many} worker processes"):
        ltdata.DataLoader(Squares(), num_workers=too_many)
