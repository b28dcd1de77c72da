"""``learntorch.nn.functional`` (``import learntorch.nn.functional as F``).

The stateless forms of the layers: ``F.relu(x)``, ``F.linear(x, w, b)``,
``F.conv2d(x, w)``, ``F.cross_entropy(logits, target)``, ...  Each family lives
in its own file under ``nn/_functional/``; this module only gathers them under
torch's names.
"""
from ._functional.activation import (relu, leaky_relu, gelu, silu, softplus,  # noqa: F401
                                     sigmoid, tanh, softmax, log_softmax, elu, selu, celu,
                                     hardtanh, relu6, hardsigmoid, hardswish, mish,
                                     logsigmoid, softsign, tanhshrink, prelu, softmin)
from ._functional.linear import linear  # noqa: F401
from ._functional.dropout import dropout, dropout1d, dropout2d  # noqa: F401
from ._functional.normalization import batch_norm, layer_norm, group_norm  # noqa: F401
from ._functional.sparse import embedding  # noqa: F401
from ._functional.onehot import one_hot  # noqa: F401
from ._functional.loss import (l1_loss, mse_loss, huber_loss, smooth_l1_loss,  # noqa: F401
                               nll_loss, cross_entropy, binary_cross_entropy,
                               binary_cross_entropy_with_logits)
from ._functional.loss_kl import kl_div  # noqa: F401
from ._functional.distance import cosine_similarity, pairwise_distance, normalize  # noqa: F401
from ..ops.padding import pad  # noqa: F401
from ._functional.conv import (conv1d, conv2d, conv_transpose1d,  # noqa: F401
                               conv_transpose2d)
from ._functional.fold import fold, unfold  # noqa: F401
from ._functional.interpolate import interpolate  # noqa: F401
from ._functional.pooling import (max_pool1d, max_pool2d, max_pool2d_with_indices,  # noqa: F401
                                  avg_pool1d, avg_pool2d, adaptive_avg_pool1d,
                                  adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d,
                                  adaptive_max_pool2d_with_indices)
from ._functional.attention import (scaled_dot_product_attention,  # noqa: F401
                                    multi_head_attention_forward)
