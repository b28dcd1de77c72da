"""The layers of ``learntorch.nn``, one family per file."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict
from .parameter_container import ParameterList, ParameterDict
from .linear import Identity, Linear
from .flatten import Flatten, Unflatten
from .activation import (ReLU, LeakyReLU, GELU, SiLU, Softplus, Tanh, Sigmoid, Softmax,
                         LogSoftmax, ELU, SELU, CELU, Hardtanh, ReLU6, Hardsigmoid, Hardswish,
                         Mish, LogSigmoid, Softsign, Tanhshrink, Softmin, PReLU)
from .dropout import Dropout
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm
from .sparse import Embedding
from .loss import (L1Loss, MSELoss, HuberLoss, SmoothL1Loss, NLLLoss, CrossEntropyLoss,
                   BCELoss, BCEWithLogitsLoss, KLDivLoss)
from .distance import CosineSimilarity, PairwiseDistance
from .conv import Conv1d, Conv2d
from .pooling import MaxPool2d, AvgPool2d, AdaptiveAvgPool2d
