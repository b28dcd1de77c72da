"""``gradcheck``: compare autograd's gradients with finite differences.

The Jacobian of ``func`` is built twice, for every input ``x_j`` that requires
grad and every output ``y_o``:

* **numerically**, one input element at a time, by central differences
  ``(f(x + eps e_k) - f(x - eps e_k)) / (2 eps)`` (row ``k``);
* **analytically**, one output element at a time, by ``autograd.grad`` with a
  one-hot output gradient (column ``i``) -- this is what backward computes.

Both are matrices of shape ``(x_j.numel(), y_o.numel())``; they must agree within
``atol + rtol * |numerical|``.  Use float64 inputs: float32 rounding swamps
differences taken with ``eps = 1e-6``.

``gradgradcheck`` runs the same check on the function ``x -> grad(f(x))``
(built with ``create_graph=True``), which tests second derivatives.

Like the rest of ``autograd``, this file knows tensors by what they carry and makes
new ones with methods of the tensors it is given (``new_zeros``, ``new_tensor``):
the Tensor class sits above it.
"""
import warnings

import numpy as np

from .engine import grad as autograd_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the gradients disagree (a RuntimeError, as in torch)."""


def _is_tensor(x):
    return hasattr(x, "_grad_fn")


def _as_tuple(x):
    return (x,) if _is_tensor(x) else tuple(x)


def _flat_outputs(func, inputs):
    """``func(*inputs)`` as a list of flat float64 arrays (None outputs count as empty)."""
    return [None if o is None else o.detach()._data.astype(np.float64).reshape(-1)
            for o in _as_tuple(func(*inputs))]


def numerical_jacobian(func, inputs, j, eps):
    """Per output: d(output)/d(inputs[j]) by central differences, shape (numel in, numel out)."""
    x = inputs[j]._data  # written in place: the function sees the perturbed values
    if not x.flags.writeable:
        raise ValueError(f"gradcheck cannot perturb input {j}: its memory is read-only (an "
                         "expand()ed view?); pass a contiguous copy (x.clone())")
    rows = []
    for k in np.ndindex(x.shape):  # any strides: index the element itself
        original = x[k]
        x[k] = original + eps
        plus = _flat_outputs(func, inputs)
        x[k] = original - eps
        minus = _flat_outputs(func, inputs)
        x[k] = original
        rows.append([None if p is None else (p - m) / (2 * eps) for p, m in zip(plus, minus)])
    n_out = len(_flat_outputs(func, inputs))
    return [np.array([row[o] for row in rows]).reshape(x.size, -1)
            if rows and rows[0][o] is not None else np.zeros((x.size, 0))
            for o in range(n_out)]


def analytical_jacobian(func, inputs, diff_idx, o):
    """d(output o)/d(inputs[j]) from autograd, for every j in ``diff_idx``."""
    out = _as_tuple(func(*inputs))[o]
    numel = 0 if out is None else out.numel()
    jac = {j: np.zeros((inputs[j].numel(), numel)) for j in diff_idx}
    if out is None or not out.requires_grad:
        return jac  # an output that does not depend on the inputs: a zero Jacobian
    wrt = [inputs[j] for j in diff_idx]
    for i in range(numel):
        one_hot = out.detach().new_zeros(out.shape)
        one_hot._data.reshape(-1)[i] = 1
        grads = autograd_grad(out, wrt, one_hot, retain_graph=True, allow_unused=True)
        for j, g in zip(diff_idx, grads):
            if g is None:
                continue
            if tuple(g.shape) != tuple(inputs[j].shape):
                raise GradcheckError(f"Gradient for input {j} has shape {list(g.shape)} but the "
                                     f"input has shape {list(inputs[j].shape)}")
            jac[j][:, i] = g._data.astype(np.float64).reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True when autograd's gradients of ``func`` at ``inputs`` match finite differences.

    On a mismatch, raises ``GradcheckError`` (a RuntimeError) showing both
    Jacobians, or returns False when ``raise_exception=False``.  The torch
    options for forward-mode AD, batched gradients and sparse tensors are
    accepted and ignored (learntorch has none of those).
    """
    inputs = _as_tuple(inputs)
    diff_idx = [j for j, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for j in diff_idx:
        if inputs[j].dtype.name != "float64":
            warnings.warn(f"Input #{j} requires gradient and is not a double precision floating "
                          "point. This check will likely fail if all the inputs are not of double "
                          "precision floating point (use .double()).", UserWarning, stacklevel=2)
    n_out = len(_as_tuple(func(*inputs)))
    for j in diff_idx:
        numerical = numerical_jacobian(func, inputs, j, eps)
        for o in range(n_out):
            analytical = analytical_jacobian(func, inputs, diff_idx, o)[j]
            num = numerical[o]
            if num.shape != analytical.shape or not np.allclose(analytical, num, rtol=rtol,
                                                                atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {o} with respect to input {j},\n"
                    f"numerical:{_show(num, inputs[j])}\n"
                    f"analytical:{_show(analytical, inputs[j])}\n"
                    f"largest difference {np.abs(num - analytical).max():.3g} "
                    f"(atol={atol}, rtol={rtol})\n")
    return True


def _show(jacobian, like):
    """The Jacobian printed as a tensor (made by ``like``, a tensor, on the cpu)."""
    return repr(like.new_tensor(jacobian, device="cpu"))


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the gradient itself: second derivatives through ``create_graph=True``.

    The checked function is ``x -> autograd.grad(func(x), x, grad_outputs)``; its
    own gradient needs the backward formulas of ``func`` to be differentiable.
    ``grad_outputs`` defaults to fixed random tensors (seeded, so reruns agree).
    """
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [o.detach().new_tensor(rng.standard_normal(tuple(o.shape)))
                        for o in _as_tuple(func(*inputs)) if o.requires_grad]
    grad_outputs = _as_tuple(grad_outputs)

    def first_derivatives(*xs):
        outputs = [o for o in _as_tuple(func(*xs)) if o.requires_grad]
        wrt = [x for x in xs if _is_tensor(x) and x.requires_grad]
        return autograd_grad(outputs, wrt, grad_outputs, create_graph=True, allow_unused=True)

    return gradcheck(first_derivatives, inputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
