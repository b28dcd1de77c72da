"""Errors are teaching moments: torch's exception type, and a message that names
the shapes/dtypes/devices involved and says what to do."""
import os

import pytest

import learntorch
from learntorch.ops._helpers import check_same_device
from oracle import require_torch


def torch_error_type(program):
    torch = require_torch()
    with pytest.raises(Exception) as info:
        program(torch)
    return type(info.value)


def test_broadcast_mismatch_names_both_shapes():
    program = lambda m: m.ones(2, 3) + m.ones(4)  # noqa: E731
    with pytest.raises(torch_error_type(program), match=r"\[2, 3\].*\[4\].*"
                                                        r"(unsqueeze|reshape|view)"):
        program(learntorch)


def test_matmul_mismatch_names_both_shapes_and_the_dimensions_that_must_agree():
    program = lambda m: m.ones(2, 3) @ m.ones(2, 3)  # noqa: E731
    with pytest.raises(torch_error_type(program), match=r"2x3 and 2x3.*must equal"):
        program(learntorch)


def test_requires_grad_on_an_integer_tensor_names_the_dtype_and_the_conversion():
    program = lambda m: m.tensor([1, 2]).requires_grad_()  # noqa: E731
    with pytest.raises(torch_error_type(program), match=r"int64.*\.float\(\)"):
        program(learntorch)


def test_index_out_of_range_names_the_dimension_and_its_size():
    program = lambda m: m.ones(2, 3)[0, 7]  # noqa: E731
    with pytest.raises(torch_error_type(program), match=r"index 7 .*dimension 1 with size 3"):
        program(learntorch)


def test_dimension_out_of_range_names_the_valid_range_and_the_shape():
    program = lambda m: m.ones(2, 3).size(2)  # noqa: E731
    with pytest.raises(torch_error_type(program), match=r"\[-2, 1\].*got 2.*\[2, 3\]"):
        program(learntorch)


def test_backward_of_a_non_scalar_without_gradient_says_how_to_fix_it():
    def program(m):
        x = m.ones(2, requires_grad=True)
        (x * 2).backward()
    with pytest.raises(torch_error_type(program),
                       match=r"only for scalar outputs.*shape \[2\].*\.sum\(\).*gradient="):
        program(learntorch)


def test_backward_twice_says_retain_graph():
    def program(m):
        x = m.ones(2, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    with pytest.raises(torch_error_type(program),
                       match=r"backward through the graph a second time.*retain_graph=True"):
        program(learntorch)


def test_in_place_change_of_a_saved_tensor_names_it_its_versions_and_the_fix():
    def program(m):
        x = m.ones(2, 3, requires_grad=True)
        y = x.exp()
        y.mul_(2)
        y.sum().backward()
    with pytest.raises(torch_error_type(program),
                       match=r"modified by an inplace operation.*\[2, 3\].*version 1.*"
                             r"expected version 0.*clone"):
        program(learntorch)


def test_in_place_on_a_leaf_says_no_grad():
    program = lambda m: m.ones(2, requires_grad=True).add_(1)  # noqa: E731
    with pytest.raises(torch_error_type(program), match=r"leaf Variable.*in-place.*no_grad"):
        program(learntorch)


def test_moving_to_cuda_without_a_gpu_is_a_clear_runtime_error():
    """Without a GPU (and without Numba's simulator) every way onto cuda says what to do.

    Run in a fresh process with the simulator switched off: the CUDA tests turn it
    on for the processes they run in."""
    import subprocess
    import sys
    program = (
        "import learntorch, re\n"
        "if learntorch.cuda.is_available():\n"
        "    print('GPU'); raise SystemExit\n"
        "for move in (lambda: learntorch.ones(2).to('cuda'), lambda: learntorch.ones(2).cuda(),\n"
        "             lambda: learntorch.ones(2, device='cuda')):\n"
        "    try:\n"
        "        move()\n"
        "    except RuntimeError as e:\n"
        "        assert re.search(r'cuda.*not available.*cuda\\.is_available\\(\\)', str(e)), e\n"
        "    else:\n"
        "        raise AssertionError('moved to cuda without a GPU')\n"
        "print('refused')\n")
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    if done.stdout.strip() == "GPU":
        pytest.skip("this machine has a GPU: moving to cuda is allowed")
    assert done.stdout.strip() == "refused"


def test_mixed_devices_are_refused_with_both_devices_named():
    cpu = learntorch.ones(2)
    fake_gpu = learntorch.ones(2)
    fake_gpu._device = learntorch.device("cuda", 0)  # no GPU needed to test the check itself
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device.*"
                                           r"cpu and cuda:0.*\.to\(device\)"):
        check_same_device(cpu, fake_gpu)
    check_same_device(cpu, learntorch.ones(3), 2.0)  # same device, numbers ignored: no error
    with pytest.raises(RuntimeError, match="same device"):
        cpu + fake_gpu


def test_unknown_device_string_is_refused():
    program = lambda m: m.device("tpu")  # noqa: E731
    with pytest.raises(torch_error_type(program), match="cpu, cuda"):
        program(learntorch)


def test_grad_of_wrong_shape_for_backward_names_both_shapes():
    def program(m):
        x = m.ones(2, requires_grad=True)
        (x * 2).backward(m.ones(3))
    with pytest.raises(torch_error_type(program), match=r"\[3\].*\[2\]"):
        program(learntorch)
