"""Moving tensors and modules between devices, factories with device=, and torch's errors."""
import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
from cuda_compare import rand


def test_cuda_is_available_with_one_device():
    assert learntorch.cuda.is_available()
    assert learntorch.cuda.device_count() == 1
    learntorch.cuda.synchronize()


@pytest.mark.parametrize("move", [lambda t: t.to("cuda"), lambda t: t.cuda(),
                                  lambda t: t.to(learntorch.device("cuda", 0)),
                                  lambda t: t.to(device="cuda:0")])
def test_round_trip_keeps_values_dtype_and_shape(move):
    x = learntorch.tensor(rand(3, 4))
    y = move(x)
    assert y.device == learntorch.device("cuda", 0) and y.is_cuda and y.get_device() == 0
    back = y.cpu()
    assert back.device.type == "cpu" and back.dtype is x.dtype
    np.testing.assert_array_equal(back.numpy(), x.numpy())


@pytest.mark.parametrize("factory", [
    lambda d: learntorch.zeros(2, 3, device=d), lambda d: learntorch.ones(4, device=d),
    lambda d: learntorch.full((2, 2), 7.0, device=d), lambda d: learntorch.arange(5, device=d),
    lambda d: learntorch.eye(3, device=d), lambda d: learntorch.tensor([[1, 2]], device=d),
    lambda d: learntorch.linspace(0, 1, 5, device=d),
    lambda d: learntorch.zeros_like(learntorch.ones(2, device=d))])
def test_factories_make_tensors_on_the_requested_device(device, factory):
    t = factory(device)
    assert t.device.type == device
    reference = factory("cpu")
    np.testing.assert_array_equal(t.cpu().numpy(), reference.numpy())
    assert t.dtype is reference.dtype


def test_repr_shows_the_device_like_torch():
    assert repr(learntorch.tensor([1.0, 2.0], device="cuda")) == \
        "tensor([1., 2.], device='cuda:0')"


def test_numpy_of_a_cuda_tensor_raises_torchs_type_error():
    t = learntorch.ones(2, device="cuda")
    message = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
               "tensor to host memory first.")
    with pytest.raises(TypeError) as error:
        t.numpy()
    assert str(error.value) == message
    with pytest.raises(TypeError, match="Tensor.cpu()"):
        np.asarray(t)


def test_an_op_on_two_devices_raises_torchs_runtime_error():
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device, "
                                           r"but found at least two devices, cpu and cuda:0!"):
        learntorch.ones(2, device="cuda") + learntorch.ones(2)
    with pytest.raises(RuntimeError, match="same device"):
        learntorch.ones(2, 2, device="cuda") @ learntorch.ones(2, 2)


def test_item_tolist_and_views_share_device_memory():
    t = learntorch.arange(6.0, device="cuda").reshape(2, 3)
    assert t.sum().item() == 15.0 and t.tolist() == [[0, 1, 2], [3, 4, 5]]
    view = t[:, 1]
    view.fill_(-1.0)  # writes through the view into t's memory
    assert t.cpu().tolist() == [[0, -1, 2], [3, -1, 5]]
    assert t.t().stride() == (1, 3) and not t.t().is_contiguous()
    assert t.t().contiguous().is_contiguous()


def test_gradients_flow_back_across_a_device_copy():
    x = learntorch.tensor(rand(3), requires_grad=True)
    y = x.cuda()
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.device.type == "cpu"
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)


def test_module_to_moves_parameters_and_buffers_and_back():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model.to("cuda")
    assert all(p.device.type == "cuda" and p.is_leaf and p.requires_grad
               for p in model.parameters())
    out = model(learntorch.ones(5, 3, device="cuda"))
    assert out.device.type == "cuda"
    model.cpu()
    assert all(p.device.type == "cpu" for p in model.parameters())


def test_a_missing_cuda_kernel_raises_not_implemented_naming_the_op():
    # every op of the engine has its kernels now: ask the array for a numpy function
    # no op uses (np.cumprod), as a new op would
    x = learntorch.ones(3, 3, device="cuda")
    with pytest.raises(NotImplementedError, match="np.cumprod has no CUDA implementation"):
        np.cumprod(x._data, axis=0)


def test_a_reshape_that_must_copy_works_on_cuda_and_sends_the_gradient_back():
    # a transposed tensor cannot be viewed as 1-D: reshape copies (UnsafeView), on the device
    values = rand(3, 4)
    weights = learntorch.tensor(rand(12))
    results = {}
    for device in ("cpu", "cuda"):
        x = learntorch.tensor(values, device=device, requires_grad=True)
        y = x.t().reshape(12)
        assert y.device.type == device and y.is_contiguous()
        (y * weights.to(device)).sum().backward()
        results[device] = (y.detach().cpu().numpy(), x.grad.cpu().numpy())
    np.testing.assert_array_equal(results["cuda"][0], values.T.reshape(12))
    np.testing.assert_array_equal(results["cuda"][1], results["cpu"][1])
