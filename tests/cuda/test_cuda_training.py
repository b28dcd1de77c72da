"""A small MLP trains on cuda exactly as on the cpu: losses and weights step by step."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
import learntorch.nn.functional as F
from cuda_compare import rand

OPTIMIZERS = {
    "sgd_momentum": lambda ps: learntorch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-3),
    "adam": lambda ps: learntorch.optim.Adam(ps, lr=0.01),
    "adamw_amsgrad": lambda ps: learntorch.optim.AdamW(ps, lr=0.01, amsgrad=True),
}


def _train(device, make_optimizer, loss_name, steps=3):
    learntorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).to(device)
    optimizer = make_optimizer(model.parameters())
    x = learntorch.tensor(rand(6, 5), device=device)
    target = learntorch.tensor([0, 1, 2, 2, 1, 0], device=device)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        out = model(x)
        loss = (F.cross_entropy(out, target) if loss_name == "cross_entropy"
                else F.mse_loss(out, F.one_hot(target, 3).float()))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()]


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_mlp_steps_match_the_cpu(optimizer):
    cpu_losses, cpu_weights = _train("cpu", OPTIMIZERS[optimizer], "cross_entropy")
    cuda_losses, cuda_weights = _train("cuda", OPTIMIZERS[optimizer], "cross_entropy")
    np.testing.assert_allclose(cuda_losses, cpu_losses, rtol=1e-5)
    assert cuda_losses[-1] < cuda_losses[0]  # it does learn
    for got, want in zip(cuda_weights, cpu_weights):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_optimizer_state_lives_on_the_parameters_device():
    model = nn.Linear(3, 2).to("cuda")
    optimizer = learntorch.optim.Adam(model.parameters())
    model(learntorch.ones(4, 3, device="cuda")).sum().backward()
    optimizer.step()
    state = optimizer.state[model.weight]
    assert state["exp_avg"].device.type == "cuda" and state["exp_avg_sq"].device.type == "cuda"
