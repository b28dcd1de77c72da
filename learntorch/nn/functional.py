"""``learntorch.nn.functional`` (``import learntorch.nn.functional as F``).

The stateless forms of the layers: ``F.relu(x)``, ``F.linear(x, w, b)``,
``F.conv2d(x, w)``, ``F.cross_entropy(logits, target)``, ...  Each family lives
in its own file under ``nn/_functional/``; this module only gathers them under
torch's names.
"""
from ..ops.activations import relu, gelu, silu, softplus, sigmoid, tanh  # noqa: F401
from ..ops.padding import pad  # noqa: F401
