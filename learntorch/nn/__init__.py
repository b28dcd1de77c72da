"""``learntorch.nn``: modules, parameters, layers, losses, initialisation, functional.

Mirrors ``torch.nn``: ``class Net(nn.Module)`` with layers assigned as
attributes in ``__init__`` and a ``forward``; ``nn.functional`` (import it as
``F``) has the stateless versions.
"""
from .parameter import Parameter, Buffer
from .modules import Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from . import functional
from . import utils
from .modules import (Identity, Linear, Flatten, Unflatten, ReLU, LeakyReLU, GELU, SiLU,
                      Softplus, Tanh, Sigmoid, Softmax, LogSoftmax, Dropout, Dropout1d, Dropout2d,
                      BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm, GroupNorm, Embedding)
from . import init
from .modules import (ELU, SELU, CELU, Hardtanh, ReLU6, Hardsigmoid, Hardswish, Mish,
                      LogSigmoid, Softsign, Tanhshrink, Softmin, PReLU)
from .modules import (L1Loss, MSELoss, HuberLoss, SmoothL1Loss, NLLLoss, CrossEntropyLoss,
                      BCELoss, BCEWithLogitsLoss, KLDivLoss)
from .modules import CosineSimilarity, PairwiseDistance
from .modules import (Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, Fold, Unfold,
                      MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d,
                      AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, Upsample,
                      UpsamplingBilinear2d, UpsamplingNearest2d)
from .modules import MultiheadAttention
from . import parallel
