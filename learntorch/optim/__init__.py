"""``learntorch.optim``: optimizers and learning-rate schedulers, as ``torch.optim``.

    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()

Files, one idea each: ``optimizer.py`` (the base class: parameter groups,
state, checkpoints), one file per algorithm (``sgd.py``, ``adam.py``,
``adamw.py``, ``rmsprop.py``, ``adagrad.py``: its options and state), and
``lr_scheduler/``.  The update of one parameter is a method of the backend
(``backends.current.sgd_update``, ...): torch's formula written once in numpy
(``backends/numpy_families/optim.py``), which the Numba and CUDA backends
replace with one fused kernel per algorithm.
"""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
