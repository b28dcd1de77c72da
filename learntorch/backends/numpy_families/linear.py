"""``linear``: the forward of ``nn.Linear`` / ``F.linear``, y = x @ W^T + b, on arrays.

One method rather than a matmul and an add, because the bias can be added *in place*
into the matmul's fresh result: no second output-sized array per layer and step.  Its
backward is written with tensor ops (matmuls and a sum: ``nn/_functional/linear.py``).
"""
import math

import numpy as np

from .. import reference as _reference


class LinearFamily:
    def linear(self, x, weight, bias):
        """``x @ weight.T + bias`` for x (..., in), weight (out, in) and a bias that broadcasts
        to the result (..., out) without growing it (or None).

        The leading dims of x are merged into one first, so ``matmul`` multiplies two
        matrices (the simplest contract, which a learner's own kernel can serve);
        ``weight.T`` is a transposed *view*: BLAS reads it in place, nothing is copied.
        """
        rows = x if x.ndim == 2 else x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
        out = _reference.as_array(self.matmul(rows, weight.T))
        out = out.reshape(x.shape[:-1] + (weight.shape[0],))
        if bias is not None:
            np.add(out, bias, out=out)
        return out
