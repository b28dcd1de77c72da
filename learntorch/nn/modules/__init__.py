"""The layers of ``learntorch.nn``, one family per file."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict
from .parameter_container import ParameterList, ParameterDict
from .linear import Identity, Linear, NonDynamicallyQuantizableLinear
from .flatten import Flatten, Unflatten
from .activation import (ReLU, LeakyReLU, GELU, SiLU, Softplus, Tanh, Sigmoid, Softmax,
                         LogSoftmax, ELU, SELU, CELU, Hardtanh, ReLU6, Hardsigmoid, Hardswish,
                         Mish, LogSigmoid, Softsign, Tanhshrink, Softmin, PReLU)
from .dropout import Dropout, Dropout1d, Dropout2d
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm, GroupNorm
from .sparse import Embedding
from .loss import (L1Loss, MSELoss, HuberLoss, SmoothL1Loss, NLLLoss, CrossEntropyLoss,
                   BCELoss, BCEWithLogitsLoss, KLDivLoss)
from .distance import CosineSimilarity, PairwiseDistance
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .fold import Fold, Unfold
from .pooling import (MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d,
                      AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .attention import MultiheadAttention
