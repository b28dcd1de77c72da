"""``learntorch.cuda``: the GPU device.

A CUDA backend (numba-cuda) is not part of this build yet, so
``is_available()`` is False and moving a tensor to 'cuda' raises a clear error.
"""


def is_available():
    return False


def device_count():
    return 0


def synchronize(device=None):
    return None


def manual_seed(seed):
    return None


def manual_seed_all(seed):
    return None


def _move(tensor, device):
    if device.type == "cpu":
        return tensor
    raise RuntimeError(
        f"cannot move a tensor to {device}: CUDA is not available in this learntorch build "
        "(no GPU backend is installed). Keep tensors on 'cpu', or check "
        "learntorch.cuda.is_available() before choosing the device.")
