"""The optimizer updates: one step of SGD, Adam/AdamW, RMSprop and Adagrad on one parameter.

Each method is torch's single-tensor update (``_single_tensor_sgd``, ``_single_tensor_adam``,
...) written once, line for line, on arrays, so both libraries give the same numbers step
for step.  The optimizers (``learntorch/optim``) keep the state and the options and call
these; the Numba backend (``numba_cpu/optim_backend.py``) and the CUDA backend override
them with kernels that do the same arithmetic in one pass (and must agree bit for bit:
``tests/optim/test_optim_fused.py``).

Unlike the other backend methods, an update writes its arguments in place -- that is what
an optimizer step is: the parameter and its state buffers change, the gradient never.

``fused`` is the optimizer's option of that name (torch's): the numbers never depend on
it.  A backend with a fused kernel reads it -- False: never the kernel; True: whenever
the arrays allow it; None (the default): when the kernel pays.
"""
import numpy as np

from .. import reference as _reference


class OptimizerFamily:
    def sgd_update(self, param, grad, momentum_buffer, *, lr, weight_decay, momentum, dampening,
                   nesterov, maximize, fused=None):
        """One SGD step.  ``momentum_buffer`` is None on the first step with momentum; the
        buffer is returned (a new one on that first step; None without momentum).

            g <- -g                          if maximize
            g <- g + weight_decay * p        if weight_decay != 0   (L2 penalty)
            b <- g (first step), else b <- momentum * b + (1 - dampening) * g
            g <- g + momentum * b (nesterov) or  g <- b             if momentum != 0
            p <- p - lr * g
        """
        device = _reference.on_device(param)
        if device is not None and device is not self:
            return device.sgd_update(param, grad, momentum_buffer, lr=lr,
                                     weight_decay=weight_decay, momentum=momentum,
                                     dampening=dampening, nesterov=nesterov, maximize=maximize,
                                     fused=fused)
        if maximize:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            if momentum_buffer is None:
                momentum_buffer = grad.copy(order="K")
            else:
                momentum_buffer *= momentum
                momentum_buffer += (1 - dampening) * grad
            if nesterov:
                grad = grad + momentum * momentum_buffer
            else:
                grad = momentum_buffer
        param -= lr * grad
        return momentum_buffer

    def adam_update(self, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, step, lr, beta1,
                    beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay,
                    fused=None):
        """One Adam (or AdamW, ``decoupled_weight_decay``) step; ``step`` counts this one.

            g <- -g                                 if maximize
            p <- p * (1 - lr * wd)                  if wd != 0 and decoupled  (AdamW)
            g <- g + wd * p                         if wd != 0 otherwise      (L2 penalty)
            m <- m + (1 - beta1) * (g - m)          (exp_avg.lerp_(g, 1 - beta1))
            v <- beta2 * v + (1 - beta2) * g * g    (exp_avg_sq)
            v_max <- max(v_max, v); use v_max for v if amsgrad
            p <- p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

        The two ``1 - beta**t`` undo the bias of m and v towards their zero start.
        ``max_exp_avg_sq`` is None without amsgrad.
        """
        device = _reference.on_device(param)
        if device is not None and device is not self:
            return device.adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq,
                                      step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      fused=fused)
        if maximize:
            grad = -grad
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param

        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5

        if amsgrad:
            np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            denom = np.sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps
        else:
            denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
        param += -step_size * exp_avg / denom

    def rmsprop_update(self, param, grad, square_avg, grad_avg, momentum_buffer, *, lr, alpha,
                       eps, weight_decay, momentum, centered, maximize, fused=None):
        """One RMSprop step; ``grad_avg`` is None unless centered, ``momentum_buffer`` unless
        momentum > 0.

            g <- -g                                  if maximize
            g <- g + wd * p                          if wd != 0
            s <- alpha * s + (1 - alpha) * g * g     (square_avg)
            a <- a + (1 - alpha) * (g - a)           if centered  (grad_avg.lerp_(g, 1 - alpha))
            d <- sqrt(s - a * a) + eps  if centered,  else  sqrt(s) + eps
            b <- momentum * b + g / d;  p <- p - lr * b     if momentum > 0
            p <- p - lr * g / d                             otherwise
        """
        device = _reference.on_device(param)
        if device is not None and device is not self:
            return device.rmsprop_update(param, grad, square_avg, grad_avg, momentum_buffer,
                                         lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                         momentum=momentum, centered=centered,
                                         maximize=maximize, fused=fused)
        if maximize:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param

        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad

        if centered:
            lerp_(grad_avg, grad, 1 - alpha)
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += eps

        if momentum > 0:
            momentum_buffer *= momentum
            momentum_buffer += grad / avg
            param -= lr * momentum_buffer
        else:
            param += -lr * grad / avg

    def adagrad_update(self, param, grad, state_sum, *, step, lr, lr_decay, weight_decay, eps,
                       maximize, fused=None):
        """One Adagrad step (dense gradients); ``step`` counts this one.

            g <- -g                                  if maximize
            g <- g + wd * p                          if wd != 0
            clr = lr / (1 + (t - 1) * lr_decay)
            s <- s + g * g                           (sum)
            p <- p - clr * g / (sqrt(s) + eps)
        """
        device = _reference.on_device(param)
        if device is not None and device is not self:
            return device.adagrad_update(param, grad, state_sum, step=step, lr=lr,
                                         lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                                         maximize=maximize, fused=fused)
        if maximize:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum += grad * grad
        std = np.sqrt(state_sum) + eps
        param += -clr * grad / std


def lerp_(start, end, weight):
    """``start.lerp_(end, weight)`` in place, with torch's two formulas.

    Both are ``start + weight * (end - start)`` in exact arithmetic; torch uses
    the second one for weights of 0.5 and above so that ``weight=1`` gives
    exactly ``end``.
    """
    weight = start.dtype.type(weight)  # torch casts the weight to the tensor's dtype first
    if abs(weight) < 0.5:
        start += weight * (end - start)
    else:
        np.subtract(end, (end - start) * (1 - weight), out=start)


# ---- what a one-pass kernel takes instead of the options: the same numbers, precomputed
# in the order the formulas above compute them (the Numba and CUDA kernels share these)
def sgd_kernel_scalars(lr, weight_decay, momentum, dampening, nesterov, maximize, first):
    return dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                one_minus_dampening=1 - dampening, nesterov=nesterov, maximize=maximize,
                first=first)


def adam_kernel_scalars(dtype, step, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize,
                        decoupled_weight_decay):
    weight = dtype.type(1 - beta1)  # lerp_'s weight, cast as lerp_ casts it
    return dict(decay=1 - lr * weight_decay, weight_decay=weight_decay, lerp_weight=weight,
                lerp_complement=1 - weight, beta2=beta2, one_minus_beta2=1 - beta2,
                bias_correction2_sqrt=(1 - beta2 ** step) ** 0.5, eps=eps,
                step_size=-(lr / (1 - beta1 ** step)), amsgrad=amsgrad, maximize=maximize,
                decoupled=decoupled_weight_decay)


def rmsprop_kernel_scalars(dtype, lr, alpha, eps, weight_decay, momentum, centered, maximize):
    weight = dtype.type(1 - alpha)
    return dict(lr=lr, alpha=alpha, one_minus_alpha=1 - alpha, lerp_weight=weight,
                lerp_complement=1 - weight, eps=eps, weight_decay=weight_decay,
                momentum=momentum, centered=centered, maximize=maximize)


def adagrad_kernel_scalars(step, lr, lr_decay, weight_decay, eps, maximize):
    return dict(clr=lr / (1 + (step - 1) * lr_decay), eps=eps, weight_decay=weight_decay,
                maximize=maximize)
