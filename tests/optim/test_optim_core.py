"""The Optimizer base class against torch's: groups, defaults, errors, zero_grad, checkpoints.

Most tests run the same code on both libraries (``lib`` is learntorch or
torch) and compare what comes out: the param groups, the repr, the state dict
layout, the exception type and message.
"""
import importlib
import inspect
import warnings

import numpy as np
import pytest

import learntorch
from oracle import require_torch

ALL = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]


def libs():
    return (learntorch, require_torch())


def params(lib, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in [(3, 2), (2,), (4,)]]
    return [lib.nn.Parameter(lib.from_numpy(a)) for a in arrays]


def give_grads(ps, seed=1):
    rng = np.random.default_rng(seed)
    for p in ps:
        p.grad = _from_numpy_like(p, rng.standard_normal(tuple(p.shape)))


def _from_numpy_like(p, values):
    lib = learntorch if isinstance(p, learntorch.Tensor) else require_torch()
    return lib.from_numpy(values.astype(str(p.dtype).split(".")[-1]))


def required(lib):
    """``from torch.optim.optimizer import required``: the default of an option with none."""
    return importlib.import_module(lib.__name__ + ".optim.optimizer").required


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the point is to compare what is raised
        return type(e), str(e)
    return None, None


def same_error(build):
    """``build(lib)`` raises the same exception type in both libraries; returns both messages."""
    (lt_type, lt_msg), (th_type, th_msg) = [error_of(lambda lib=lib: build(lib)) for lib in libs()]
    assert th_type is not None, "torch accepted it: the test is wrong"
    assert lt_type is th_type, f"learntorch raised {lt_type} ({lt_msg}), torch {th_type} ({th_msg})"
    return lt_msg, th_msg


def group_options(opt):
    return [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]


# ---------------------------------------------------------------- groups and defaults
@pytest.mark.parametrize("name", ALL)
def test_default_options_are_torchs(name):
    mine, theirs = [getattr(lib.optim, name)(params(lib), lr=0.5) for lib in libs()]
    assert group_options(mine) == group_options(theirs)
    assert mine.defaults == theirs.defaults


@pytest.mark.parametrize("name", ALL)
def test_repr_is_torchs(name):
    made = []
    for lib in libs():
        a, b, c = params(lib)
        made.append(getattr(lib.optim, name)([{"params": [a, b]}, {"params": [c], "lr": 0.1}],
                                             lr=0.5))
    assert repr(made[0]) == repr(made[1])


def test_groups_keep_their_own_options_and_take_the_rest_from_the_defaults():
    mine, theirs = [lib.optim.SGD([{"params": params(lib)[:2], "momentum": 0.5},
                                   {"params": params(lib)[2:], "lr": 0.1}], lr=0.01, momentum=0.9)
                    for lib in libs()]
    assert group_options(mine) == group_options(theirs)
    assert [g["momentum"] for g in mine.param_groups] == [0.5, 0.9]


def test_add_param_group_and_named_parameters():
    made = []
    for lib in libs():
        class Affine(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = lib.nn.Parameter(lib.ones(3, 2))
                self.bias = lib.nn.Parameter(lib.zeros(2))

        model = lib.nn.Sequential(Affine(), Affine())
        opt = lib.optim.Adam(model[0].named_parameters(), lr=0.1)
        opt.add_param_group({"params": model[1].named_parameters(), "lr": 0.01})
        made.append(opt)
    assert group_options(made[0]) == group_options(made[1])
    assert made[0].param_groups[0]["param_names"] == ["weight", "bias"]


# ---------------------------------------------------------------- errors, as torch's
def test_a_single_tensor_instead_of_an_iterable_is_a_type_error():
    lt_msg, _ = same_error(lambda lib: lib.optim.SGD(params(lib)[0], lr=0.1))
    assert "iterable of Tensors or dicts" in lt_msg and "torch.FloatTensor" in lt_msg


@pytest.mark.parametrize("case", ["empty", "twice", "non_leaf", "set", "not_tensor",
                                  "missing_required", "not_dict", "mixed_names"])
def test_bad_parameter_lists_raise_torchs_errors(case):
    def build(lib):
        a, b, c = params(lib)
        if case == "empty":
            return lib.optim.SGD([], lr=0.1)
        if case == "twice":
            return lib.optim.SGD([{"params": [a, b]}, {"params": [b, c]}], lr=0.1)
        if case == "non_leaf":
            return lib.optim.SGD([a * 2], lr=0.1)
        if case == "set":
            return lib.optim.SGD([{"params": {a, b}}], lr=0.1)
        if case == "not_tensor":
            return lib.optim.SGD([a, 3.0], lr=0.1)
        if case == "missing_required":
            class Mine(lib.optim.Optimizer):
                def __init__(self, ps, lr=required(lib)):
                    super().__init__(ps, {"lr": lr})
            return Mine([a])
        if case == "not_dict":
            return lib.optim.SGD([a], lr=0.1).add_param_group([b])
        return lib.optim.SGD([("a", a), b], lr=0.1)
    lt_msg, th_msg = same_error(build)
    assert lt_msg.startswith(th_msg)  # torch's words, sometimes followed by the fix


BAD_OPTIONS = [
    ("SGD", dict(lr=-0.1)), ("SGD", dict(lr=0.1, momentum=-0.5)),
    ("SGD", dict(lr=0.1, weight_decay=-1)), ("SGD", dict(lr=0.1, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)),
    ("Adam", dict(lr=-1)), ("Adam", dict(eps=-1)), ("Adam", dict(betas=(1.0, 0.999))),
    ("Adam", dict(betas=(0.9, -0.1))), ("Adam", dict(weight_decay=-1)),
    ("Adam", dict(betas=(0, 0.999))), ("AdamW", dict(betas=(0.9, 1.5))),
    ("RMSprop", dict(alpha=-0.1)), ("RMSprop", dict(momentum=-1)), ("RMSprop", dict(eps=-1)),
    ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(initial_accumulator_value=-1)),
    ("Adagrad", dict(eps=-1)), ("Adam", dict(fused=True, foreach=True)),
]


@pytest.mark.parametrize("name, options", BAD_OPTIONS)
def test_bad_options_raise_torchs_errors(name, options):
    lt_msg, th_msg = same_error(lambda lib: getattr(lib.optim, name)(params(lib), **options))
    assert lt_msg == th_msg


def test_a_duplicate_parameter_in_a_group_warns_like_torch():
    for lib in libs():
        a = params(lib)[0]
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([a, a], lr=0.1)


def test_differentiable_true_says_it_is_not_supported():
    with pytest.raises(NotImplementedError, match="differentiable"):
        learntorch.optim.SGD(params(learntorch), lr=0.1, differentiable=True)


# ---------------------------------------------------------------- zero_grad
@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_sets_none_or_zeros_in_place(set_to_none):
    for lib in libs():
        ps = params(lib)
        opt = lib.optim.SGD(ps, lr=0.1)
        give_grads(ps[:2])
        kept = ps[0].grad
        opt.zero_grad(set_to_none=set_to_none)
        if set_to_none:
            assert all(p.grad is None for p in ps)
        else:
            assert ps[0].grad is kept and not ps[0].grad.any() and not ps[1].grad.any()
            assert ps[2].grad is None


def test_zero_grad_default_sets_none():
    ps = params(learntorch)
    give_grads(ps)
    learntorch.optim.Adam(ps).zero_grad()
    assert all(p.grad is None for p in ps)


# ---------------------------------------------------------------- steps and autograd
def test_step_updates_under_no_grad_and_bumps_the_version():
    for lib in libs():
        ps = params(lib)
        opt = lib.optim.Adam(ps, lr=0.1)
        give_grads(ps)
        before = ps[0]._version
        opt.step()
        assert ps[0].is_leaf and ps[0].grad_fn is None and ps[0].requires_grad
        assert ps[0]._version > before


def test_a_step_between_forward_and_backward_is_caught_at_backward():
    for lib in libs():
        w = params(lib)[0]
        opt = lib.optim.SGD([w], lr=0.1)
        loss = (w * w).sum()  # saves w for backward
        w.grad = _from_numpy_like(w, np.ones(tuple(w.shape)))
        opt.step()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


def test_a_tensor_learning_rate_works_like_a_float():
    results = []
    for lib in libs():
        ps = params(lib, "float64")
        opt = lib.optim.SGD(ps, lr=lib.tensor(0.1), momentum=0.9)
        for seed in range(3):
            give_grads(ps, seed)
            opt.step()
        results.append([p.detach().numpy().copy() for p in ps])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_a_learners_own_optimizer_runs_on_both_libraries():
    """Chapter code: a plain SGD written against the public API, with required lr and state."""
    results = []
    for lib in libs():
        class PlainSGD(lib.optim.Optimizer):
            def __init__(self, ps, lr=required(lib)):
                super().__init__(ps, {"lr": lr})

            @lib.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            self.state[p]["updates"] = self.state[p].get("updates", 0) + 1
                            p.add_(p.grad, alpha=-group["lr"])

        ps = params(lib, "float64")
        opt = PlainSGD(ps, lr=0.5)
        calls = []
        opt.register_step_post_hook(lambda o, args, kwargs: calls.append(len(args)))
        give_grads(ps)
        opt.step()
        opt.step()
        results.append(([p.detach().numpy().copy() for p in ps], opt.state_dict()["state"],
                        calls))
    (lt_values, lt_state, lt_calls), (th_values, th_state, th_calls) = results
    for mine, theirs in zip(lt_values, th_values):
        np.testing.assert_allclose(mine, theirs, rtol=1e-14)
    assert lt_state == th_state == {0: {"updates": 2}, 1: {"updates": 2}, 2: {"updates": 2}}
    assert lt_calls == th_calls == [1, 1]  # args holds the optimizer itself


def test_step_hooks_run_around_the_step_and_can_be_removed():
    ps = params(learntorch)
    opt = learntorch.optim.SGD(ps, lr=0.1)
    seen = []
    pre = opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", ps[0].detach().clone())))
    opt.register_step_post_hook(lambda o, a, k: seen.append(("post", ps[0].detach().clone())))
    give_grads(ps)
    start = ps[0].detach().clone()
    opt.step()
    assert [kind for kind, _ in seen] == ["pre", "post"]
    assert learntorch.equal(seen[0][1], start) and learntorch.equal(seen[1][1], ps[0])
    pre.remove()
    opt.step()
    assert [kind for kind, _ in seen] == ["pre", "post", "post"]


# ---------------------------------------------------------------- checkpoints
def trained(lib, name, options, steps=3, dtype="float32"):
    ps = params(lib, dtype)
    opt = getattr(lib.optim, name)([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.05}],
                                   **options)
    for seed in range(steps):
        give_grads(ps[:2] if seed == 0 else ps, seed)  # ps[2] has no grad on the first step
        opt.step()
    return ps, opt


def as_plain(obj):
    """A state dict with tensors turned into numpy arrays, for comparing across libraries."""
    if isinstance(obj, dict):
        return {k: as_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(as_plain(v) for v in obj)
    if hasattr(obj, "detach"):
        return ("tensor", str(obj.dtype).split(".")[-1], tuple(obj.shape),
                obj.detach().numpy().round(5).tolist())
    return obj


@pytest.mark.parametrize("name, options", [("SGD", dict(lr=0.1, momentum=0.9)),
                                           ("Adam", dict(amsgrad=True)), ("RMSprop", {}),
                                           ("Adagrad", {})])
def test_state_dict_has_torchs_layout_and_values(name, options):
    mine, theirs = [trained(lib, name, options)[1].state_dict() for lib in libs()]
    assert set(mine) == {"state", "param_groups"}
    assert as_plain(mine) == as_plain(theirs)


@pytest.mark.parametrize("name, options", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                           ("Adam", dict(lr=0.01, amsgrad=True)),
                                           ("AdamW", dict(lr=0.01)),
                                           ("RMSprop", dict(centered=True, momentum=0.5)),
                                           ("Adagrad", dict(lr_decay=0.1))])
def test_a_loaded_optimizer_continues_exactly_where_the_saved_one_was(name, options, tmp_path):
    ps, opt = trained(learntorch, name, options, dtype="float64")
    learntorch.save(opt.state_dict(), tmp_path / "opt.pt")
    fresh_ps = [learntorch.nn.Parameter(p.detach().clone()) for p in ps]
    fresh = getattr(learntorch.optim, name)([{"params": fresh_ps[:2]}, {"params": fresh_ps[2:]}],
                                            **options)
    fresh.load_state_dict(learntorch.load(tmp_path / "opt.pt"))
    assert group_options(fresh) == group_options(opt)  # including the group's own lr
    for seed in range(10, 14):
        give_grads(ps, seed)
        give_grads(fresh_ps, seed)
        opt.step()
        fresh.step()
    for a, b in zip(ps, fresh_ps):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_loading_casts_state_to_the_parameters_dtype_except_step():
    _, source = trained(learntorch, "Adam", {}, dtype="float32")
    ps = params(learntorch, "float64")
    target = learntorch.optim.Adam([{"params": ps[:2]}, {"params": ps[2:]}])
    target.load_state_dict(source.state_dict())
    state = target.state[ps[0]]
    assert state["exp_avg"].dtype is learntorch.float64
    assert state["exp_avg_sq"].dtype is learntorch.float64
    assert state["step"].dtype is learntorch.float32 and state["step"].item() == 3


def test_loaded_state_is_a_copy_not_shared_with_the_source():
    """A documented difference: torch reuses the loaded tensors when no cast is needed."""
    ps, source = trained(learntorch, "Adam", {})
    target_ps = params(learntorch)
    target = learntorch.optim.Adam([{"params": target_ps[:2]}, {"params": target_ps[2:]}])
    target.load_state_dict(source.state_dict())
    before = source.state[ps[0]]["exp_avg"].clone()
    give_grads(target_ps)
    target.step()
    assert learntorch.equal(source.state[ps[0]]["exp_avg"], before)


@pytest.mark.parametrize("case", ["groups", "sizes"])
def test_loading_a_state_dict_of_another_shape_raises_torchs_value_error(case):
    def build(lib):
        a, b, c = params(lib)
        saved = lib.optim.SGD([{"params": [a, b]}, {"params": [c]}], lr=0.1).state_dict()
        groups = [{"params": [a, b, c]}] if case == "groups" else [{"params": [a]},
                                                                    {"params": [b, c]}]
        lib.optim.SGD(groups, lr=0.1).load_state_dict(saved)
    lt_msg, th_msg = same_error(build)
    assert lt_msg.startswith(th_msg)


def test_state_of_unknown_keys_survives_a_load_untouched():
    ps = params(learntorch)
    opt = learntorch.optim.SGD(ps, lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.load_state_dict({"state": {"extra": 1}, "param_groups": [
            {**group_options(opt)[0], "params": [0, 1, 2]}]})
    assert opt.state["extra"] == 1


SCHEDULERS = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR",
              "CosineAnnealingLR", "OneCycleLR", "ReduceLROnPlateau"]


@pytest.mark.parametrize("name", ALL + ["Optimizer"] + [f"lr_scheduler.{s}" for s in SCHEDULERS])
def test_constructor_parameters_are_torchs_in_order_and_kind(name):
    """Code that passes options by keyword or by position moves to torch unchanged."""
    signatures = []
    for lib in libs():
        obj = lib.optim
        for part in name.split("."):
            obj = getattr(obj, part)
        signatures.append([(p.name, p.kind, p.default)
                           for p in inspect.signature(obj.__init__).parameters.values()])
    assert signatures[0] == signatures[1]


@pytest.mark.parametrize("name, fused", [("Adam", None), ("Adam", True), ("RMSprop", None),
                                         ("Adagrad", None), ("Adagrad", True)])
def test_the_step_counter_is_float64_when_that_is_the_default_dtype_unless_fused(name, fused):
    found = []
    for lib in libs():
        previous = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            ps = params(lib, "float64")
            extra = {} if fused is None else {"fused": fused}
            opt = getattr(lib.optim, name)(ps, lr=0.1, **extra)
            give_grads(ps)
            opt.step()
            found.append(str(opt.state[ps[0]]["step"].dtype).split(".")[-1])
        finally:
            lib.set_default_dtype(previous)
    assert found[0] == found[1] == ("float32" if fused else "float64")


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "Adagrad"])
def test_an_old_checkpoint_with_a_numeric_step_and_fewer_options_loads_like_torch(name):
    results = []
    for lib in libs():
        ps = params(lib, "float64")
        source = getattr(lib.optim, name)(ps, lr=0.1)
        give_grads(ps, 5)
        source.step()
        saved = source.state_dict()
        for state in saved["state"].values():
            state["step"] = 1  # how checkpoints of torch < 1.12 stored it
        for group in saved["param_groups"]:
            del group["maximize"]
        fresh = [lib.nn.Parameter(p.detach().clone()) for p in ps]
        target = getattr(lib.optim, name)(fresh, lr=0.1)
        target.load_state_dict(saved)
        give_grads(fresh, 6)
        target.step()
        step = target.state[fresh[0]]["step"]
        results.append((step.item(), target.param_groups[0]["maximize"],
                        [p.detach().numpy().copy() for p in fresh]))
    assert results[0][:2] == results[1][:2] == (2.0, False)
    for mine, theirs in zip(results[0][2], results[1][2]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)
