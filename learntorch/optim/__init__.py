"""``learntorch.optim``: optimizers and learning-rate schedulers, as ``torch.optim``.

    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()

Files, one idea each: ``optimizer.py`` (the base class: parameter groups,
state, checkpoints), one file per algorithm (``sgd.py``, ``adam.py``,
``adamw.py``, ``rmsprop.py``, ``adagrad.py``) whose ``*_update`` function is the
algorithm on numpy arrays, ``_kernels.py`` (the same updates fused into one
Numba loop each), ``_fused.py`` (which of the two runs), and
``lr_scheduler.py``.
"""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
