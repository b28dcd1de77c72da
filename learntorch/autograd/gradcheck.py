"""``gradcheck``: compare autograd's gradients with finite differences.

For each input x_j and each output element y_i, the numerical derivative is the
central difference ``(f(x + eps e_k) - f(x - eps e_k)) / (2 eps)``; the analytical
one is one row of the Jacobian, obtained by ``autograd.grad`` with a one-hot
output gradient.  Use float64 inputs: float32 rounding swamps the differences.
"""
import numpy as np


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the gradients disagree (a RuntimeError, as in torch)."""


def _outputs(func, inputs):
    from .._tensor import Tensor
    out = func(*inputs)
    return (out,) if isinstance(out, Tensor) else tuple(out)


def _numerical_jacobian(func, inputs, j, eps):
    from .grad_mode import no_grad
    x = inputs[j]
    flat = x._data.reshape(-1)  # a view when contiguous; writes go to x
    if not x._data.flags["C_CONTIGUOUS"]:
        raise ValueError("gradcheck needs contiguous inputs; call .contiguous() first")
    columns = []
    with no_grad():
        for k in range(flat.size):
            orig = flat[k]
            flat[k] = orig + eps
            plus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
            flat[k] = orig - eps
            minus = [o._data.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
            flat[k] = orig
            columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    # jac[o] has shape (numel of input, numel of output o)
    return [np.array([c[o] for c in columns]).reshape(flat.size, -1) for o in range(len(columns[0]))] \
        if columns else None


def _analytical_jacobian(func, inputs, diff_idx, o):
    from . import grad as autograd_grad
    from ..factories import zeros_like
    outs = _outputs(func, inputs)
    out = outs[o]
    jac = {j: np.zeros((inputs[j].numel(), out.numel())) for j in diff_idx}
    if not out.requires_grad:
        return jac
    for i in range(out.numel()):
        g = zeros_like(out)
        g._data.reshape(-1)[i] = 1
        grads = autograd_grad(out, [inputs[j] for j in diff_idx], g, retain_graph=True,
                              allow_unused=True)
        for j, gj in zip(diff_idx, grads):
            if gj is not None:
                jac[j][:, i] = gj._data.astype(np.float64).reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False):
    """True when autograd's gradients of ``func`` at ``inputs`` match finite differences."""
    from .._tensor import Tensor
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    diff_idx = [j for j, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for j in diff_idx:
        if inputs[j].dtype.name != "float64":
            import warnings
            warnings.warn(f"Input #{j} requires gradient and is not a double precision floating "
                          "point; gradcheck is only reliable in float64 (use .double()).")
    n_out = len(_outputs(func, inputs))
    for j in diff_idx:
        numerical = _numerical_jacobian(func, inputs, j, eps)
        for o in range(n_out):
            analytical = _analytical_jacobian(func, inputs, diff_idx, o)[j]
            num = numerical[o] if numerical is not None else np.zeros_like(analytical)
            if not np.allclose(analytical, num, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {o} with respect to input {j},\n"
                    f"numerical:{_show(num)}\nanalytical:{_show(analytical)}\n"
                    f"largest difference {np.abs(num - analytical).max():.3g} "
                    f"(atol={atol}, rtol={rtol})")
    return True


def _show(m):
    from ..factories import tensor
    return repr(tensor(m.T if m.ndim == 2 else m, dtype="float64"))


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True):
    """gradcheck of the gradient itself (second derivatives via create_graph=True)."""
    from .._tensor import Tensor
    from . import grad as autograd_grad
    from ..factories import randn
    from .. import random
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        gen = random.Generator().manual_seed(0)
        grad_outputs = [randn(tuple(o.shape), dtype=o.dtype, generator=gen) for o in outs]
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]

    def first_grads(*xs):
        o = _outputs(func, xs)
        d = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
        return autograd_grad(o, d, grad_outputs, create_graph=True, allow_unused=True)
    del diff
    return gradcheck(first_grads, inputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
