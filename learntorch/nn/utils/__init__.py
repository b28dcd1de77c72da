"""``learntorch.nn.utils``: helpers around training, as ``torch.nn.utils``.

* ``clip_grad.py`` -- ``clip_grad_norm_``, ``clip_grad_value_`` (and the two halves of
  the first, ``get_total_norm`` and ``clip_grads_with_norm_``);
* ``convert_parameters.py`` -- ``parameters_to_vector``, ``vector_to_parameters``.
"""
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters"]
