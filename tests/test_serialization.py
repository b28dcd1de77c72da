"""learntorch.save / learntorch.load: round trips, and files that must never run code."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import learntorch
from learntorch import nn


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    learntorch.save(obj, buf)
    buf.seek(0)
    return learntorch.load(buf, **load_kwargs)


def test_tensors_of_every_dtype_and_shape_round_trip_exactly():
    for dtype in (learntorch.float32, learntorch.float64, learntorch.float16, learntorch.int64,
                  learntorch.int32, learntorch.uint8, learntorch.bool):
        for shape in [(), (0,), (3,), (2, 3), (2, 1, 4)]:
            t = (learntorch.randn(shape) * 10).to(dtype)
            back = roundtrip(t)
            assert back.dtype is dtype and tuple(back.shape) == shape
            np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_non_contiguous_views_are_saved_by_value():
    base = learntorch.arange(12.0).reshape(3, 4)
    view = base.t()[1:, ::2]
    back = roundtrip(view)
    np.testing.assert_array_equal(back.numpy(), view.numpy())
    assert back.is_contiguous()


def test_nested_containers_keep_types_keys_and_order():
    obj = {
        "model": collections.OrderedDict([("b", learntorch.ones(2)), ("a", learntorch.zeros(1))]),
        "optimizer": {"state": {0: {"step": learntorch.tensor(3.0), "exp_avg": learntorch.ones(2)}},
                      "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1],
                                        "eps": 1e-8, "maximize": False, "name": None,
                                        "limit": float("inf")}]},
        "epoch": 7,
        "history": [0.5, float("nan")],
    }
    back = roundtrip(obj)
    assert isinstance(back["model"], collections.OrderedDict)
    assert list(back["model"].keys()) == ["b", "a"]
    group = back["optimizer"]["param_groups"][0]
    assert group["betas"] == (0.9, 0.999) and isinstance(group["betas"], tuple)
    assert group["params"] == [0, 1] and group["name"] is None and group["limit"] == float("inf")
    assert list(back["optimizer"]["state"].keys()) == [0]  # int keys stay ints
    assert back["optimizer"]["state"][0]["step"].item() == 3.0
    assert back["epoch"] == 7 and np.isnan(back["history"][1])


def test_module_state_dict_round_trip_restores_the_model(tmp_path):
    net = nn.Module()
    net.w = nn.Parameter(learntorch.randn(3, 2))
    net.register_buffer("count", learntorch.tensor(4))
    path = tmp_path / "model.pt"
    learntorch.save(net.state_dict(), path)
    other = nn.Module()
    other.w = nn.Parameter(learntorch.zeros(3, 2))
    other.register_buffer("count", learntorch.tensor(0))
    other.load_state_dict(learntorch.load(path))
    np.testing.assert_array_equal(other.w.detach().numpy(), net.w.detach().numpy())
    assert other.count.item() == 4


def test_parameters_and_requires_grad_survive():
    back = roundtrip({"p": nn.Parameter(learntorch.ones(2)),
                      "g": learntorch.ones(2, requires_grad=True), "n": learntorch.ones(2)})
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad
    assert back["g"].requires_grad and back["g"].is_leaf and not back["n"].requires_grad


def test_map_location_forms_are_accepted_for_cpu():
    t = learntorch.arange(3)
    for loc in ("cpu", learntorch.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage):
        np.testing.assert_array_equal(roundtrip(t, map_location=loc).numpy(), t.numpy())


def test_saving_unsupported_objects_is_refused_with_a_hint():
    net = nn.Module()
    with pytest.raises(TypeError, match="state_dict"):
        learntorch.save(net, io.BytesIO())
    with pytest.raises(TypeError, match="function"):
        learntorch.save({"f": print}, io.BytesIO())
    with pytest.raises(TypeError, match="keys"):
        learntorch.save({(1, 2): 3}, io.BytesIO())


class _Exploit:
    """Unpickling this object would create a file: proof that code ran."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_pickle_that_would_run_code_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Exploit(str(marker)))
    # 1) a bare pickle file
    bare = tmp_path / "bare.pt"
    bare.write_bytes(payload)
    with pytest.raises(RuntimeError, match="never unpickles"):
        learntorch.load(bare)
    # 2) a torch.save-style zip whose data.pkl holds the payload
    torch_style = tmp_path / "torch_style.pt"
    with zipfile.ZipFile(torch_style, "w") as z:
        z.writestr("archive/data.pkl", payload)
    with pytest.raises(RuntimeError, match="torch.save"):
        learntorch.load(torch_style)
    # 3) a learntorch archive whose tensor entry is a pickled object array
    sneaky = tmp_path / "sneaky.pt"
    buf = io.BytesIO()
    np.save(buf, np.array([_Exploit(str(marker))], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(sneaky, "w") as z:
        z.writestr("learntorch/format", '{"format": "learntorch-save", "version": 1}')
        z.writestr("learntorch/structure.json", '{"tensor": 0}')
        z.writestr("learntorch/tensors/0.npy", buf.getvalue())
    with pytest.raises(RuntimeError, match="not plain numeric data"):
        learntorch.load(sneaky)
    assert not marker.exists(), "loading a file executed code"


def test_corrupt_truncated_empty_and_foreign_files_raise_clear_errors(tmp_path):
    good = io.BytesIO()
    learntorch.save({"w": learntorch.ones(100)}, good)
    data = good.getvalue()
    cases = {
        "empty": b"",
        "truncated": data[: len(data) // 2],
        "garbage": os.urandom(200),
        "text": b"hello, this is not a model",
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(RuntimeError, match="learntorch.load"):
            learntorch.load(path)
    other_zip = tmp_path / "other.zip"
    with zipfile.ZipFile(other_zip, "w") as z:
        z.writestr("readme.txt", "hi")
    with pytest.raises(RuntimeError, match="not a learntorch file"):
        learntorch.load(other_zip)
    newer = tmp_path / "newer.pt"
    with zipfile.ZipFile(newer, "w") as z:
        z.writestr("learntorch/format", '{"format": "learntorch-save", "version": 99}')
        z.writestr("learntorch/structure.json", "null")
    with pytest.raises(RuntimeError, match="newer"):
        learntorch.load(newer)
