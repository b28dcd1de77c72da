"""A checkpoint -- model, optimizer, scheduler, epoch and random states in one learntorch.save --
resumes training bit for bit: the resumed run is the uninterrupted one.

The run has everything that draws random numbers or keeps state across steps: dropout
masks and DataLoader shuffling (from the default generator, and from a loader's own
generator), Adam's moments and step counts, a learning-rate schedule.  The resumed run
starts in a "new process": everything is rebuilt from another seed, so whatever matches
came from the file.
"""
import collections

import numpy as np
import pytest

import learntorch
from learntorch import nn
from learntorch.utils.data import DataLoader, TensorDataset
from oracle import require_torch


def make_run(seed, own_generator):
    """Model, optimizer, scheduler and loaders as a training script builds them."""
    learntorch.manual_seed(seed)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(32, 10))
    optimizer = learntorch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = learntorch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    data = learntorch.Generator().manual_seed(1234)  # the data set itself is the same every run
    images = learntorch.randn(96, 1, 8, 8, generator=data)
    labels = learntorch.randint(0, 10, (96,), generator=data)
    generator = learntorch.Generator().manual_seed(seed + 1) if own_generator else None
    loader = DataLoader(TensorDataset(images, labels), batch_size=16, shuffle=True,
                        generator=generator)
    return model, optimizer, scheduler, loader, generator


def train_epochs(model, optimizer, scheduler, loader, epochs):
    losses = []
    for _ in epochs:
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    return losses


def checkpoint(model, optimizer, scheduler, epoch, generator):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "scheduler": scheduler.state_dict(), "epoch": epoch,
             "rng_state": learntorch.get_rng_state()}
    if generator is not None:
        state["loader_rng_state"] = generator.get_state()
    return state


@pytest.mark.parametrize("own_generator", [False, True], ids=["default-generator",
                                                              "loader-generator"])
def test_a_resumed_run_is_the_uninterrupted_run_bit_for_bit(tmp_path, own_generator):
    k, m = 3, 3
    # the uninterrupted run: k + m epochs
    model, optimizer, scheduler, loader, generator = make_run(0, own_generator)
    straight = train_epochs(model, optimizer, scheduler, loader, range(k + m))
    straight_params = {n: p.detach().clone() for n, p in model.named_parameters()}
    straight_draws = learntorch.rand(5).tolist()

    # the interrupted run: k epochs, a checkpoint on disk, then everything is gone
    model, optimizer, scheduler, loader, generator = make_run(0, own_generator)
    first = train_epochs(model, optimizer, scheduler, loader, range(k))
    path = tmp_path / "checkpoint.pt"
    learntorch.save(checkpoint(model, optimizer, scheduler, k, generator), path)
    del model, optimizer, scheduler, loader, generator

    # a new process: built from another seed, then restored from the file
    model, optimizer, scheduler, loader, generator = make_run(99, own_generator)
    state = learntorch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    learntorch.set_rng_state(state["rng_state"])
    if own_generator:
        generator.set_state(state["loader_rng_state"])
    rest = train_epochs(model, optimizer, scheduler, loader, range(state["epoch"], k + m))

    assert first + rest == straight                                   # every loss, exactly
    for name, p in model.named_parameters():
        np.testing.assert_array_equal(p.detach().numpy(), straight_params[name].numpy(), name)
    assert learntorch.rand(5).tolist() == straight_draws              # the streams went on alike
    assert optimizer.param_groups[0]["lr"] == pytest.approx(1e-2 * 0.5 ** ((k + m) // 2))


def test_without_the_random_state_the_resumed_run_differs():
    """The control: restoring everything but the random state does not resume the run
    (dropout masks and shuffles differ), which is why a checkpoint holds it."""
    model, optimizer, scheduler, loader, _ = make_run(0, False)
    straight = train_epochs(model, optimizer, scheduler, loader, range(2))
    model, optimizer, scheduler, loader, _ = make_run(0, False)
    train_epochs(model, optimizer, scheduler, loader, range(1))
    state = checkpoint(model, optimizer, scheduler, 1, None)
    model, optimizer, scheduler, loader, _ = make_run(99, False)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    assert train_epochs(model, optimizer, scheduler, loader, range(1, 2)) != straight[6:]


def test_a_checkpoint_loads_into_a_changed_model_with_strict_false_as_in_torch():
    torch = require_torch()

    def models(lib):
        old = lib.nn.Sequential(lib.nn.Flatten(), lib.nn.Linear(64, 32), lib.nn.ReLU(),
                                lib.nn.Linear(32, 10))
        new = lib.nn.Sequential(lib.nn.Flatten(), lib.nn.Linear(64, 32), lib.nn.ReLU(),
                                lib.nn.Dropout(0.1), lib.nn.Linear(32, 10),
                                lib.nn.Linear(10, 10))
        return old, new

    old, new = models(learntorch)
    state = learntorch.load(_saved(old.state_dict()))
    result = new.load_state_dict(state, strict=False)
    torch_old, torch_new = models(torch)
    expected = torch_new.load_state_dict(torch_old.state_dict(), strict=False)
    assert result.missing_keys == expected.missing_keys == ["4.weight", "4.bias", "5.weight",
                                                            "5.bias"]
    assert result.unexpected_keys == expected.unexpected_keys == ["3.weight", "3.bias"]
    assert learntorch.equal(new[1].weight, old[1].weight)   # what matched was loaded
    with pytest.raises(RuntimeError, match="Missing key"):
        new.load_state_dict(state)


def _saved(obj):
    import io
    buf = io.BytesIO()
    learntorch.save(obj, buf)
    buf.seek(0)
    return buf


def test_every_state_a_checkpoint_holds_survives_the_file_as_it_was():
    model, optimizer, scheduler, loader, generator = make_run(0, True)
    train_epochs(model, optimizer, scheduler, loader, range(1))
    state = checkpoint(model, optimizer, scheduler, 1, generator)
    back = learntorch.load(_saved(state))
    assert isinstance(back["model"], collections.OrderedDict)
    assert list(back["model"]) == list(state["model"])
    assert back["scheduler"] == state["scheduler"]
    assert back["optimizer"]["param_groups"] == state["optimizer"]["param_groups"]
    for index, slots in state["optimizer"]["state"].items():
        for key, value in slots.items():
            assert learntorch.equal(back["optimizer"]["state"][index][key], value), key
    assert learntorch.equal(back["rng_state"], state["rng_state"])
    assert learntorch.equal(back["loader_rng_state"], state["loader_rng_state"])
