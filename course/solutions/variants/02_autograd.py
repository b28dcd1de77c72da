"""Learner variants of chapter 02 (autograd): 02.1 a custom Function (smoothstep), 02.2 summing a
gradient back to its input's shape.  See course/variants.py for the format."""
from course.variants import correct, mistake

VARIANTS = {
    "02.1": [
        correct("saves x; the mask of [0, 1] made in backward", """
            class SmoothStep(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    t = x.clamp(0, 1)
                    return 3 * t ** 2 - 2 * t ** 3

                @staticmethod
                def backward(ctx, grad_out):
                    (x,) = ctx.saved_tensors
                    inside = ((x >= 0) & (x <= 1)).to(x.dtype)
                    return grad_out * 6 * x * (1 - x) * inside
        """),
        correct("saves the clamped t; torch.where in backward", """
            class SmoothStep(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    t = torch.clamp(x, min=0.0, max=1.0)
                    ctx.save_for_backward(t)
                    return t * t * (3.0 - 2.0 * t)

                @staticmethod
                def backward(ctx, grad_out):
                    t, = ctx.saved_tensors
                    slope = torch.where((t > 0) & (t < 1), 6 * t * (1 - t), torch.zeros_like(t))
                    return grad_out * slope
        """),
        mistake("t kept on ctx instead of ctx.save_for_backward", """
            class SmoothStep(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    t = x.clamp(0, 1)
                    ctx.t = t
                    return t * t * (3 - 2 * t)

                @staticmethod
                def backward(ctx, grad_out):
                    return grad_out * 6 * ctx.t * (1 - ctx.t)
        """, feedback=["ctx.t", "save_for_backward"]),
        mistake("backward forgets grad_out", """
            class SmoothStep(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    t = x.clamp(0, 1)
                    ctx.save_for_backward(t)
                    return t * t * (3 - 2 * t)

                @staticmethod
                def backward(ctx, grad_out):
                    (t,) = ctx.saved_tensors
                    return 6 * t * (1 - t)
        """, feedback=["x.grad after SmoothStep.apply(x).backward(g)", "grad_out left out"]),
        mistake("the derivative 6x(1 - x) used outside [0, 1] too", """
            class SmoothStep(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    t = x.clamp(0, 1)
                    return t * t * (3 - 2 * t)

                @staticmethod
                def backward(ctx, grad_out):
                    (x,) = ctx.saved_tensors
                    return grad_out * 6 * x * (1 - x)
        """, feedback=["x.grad after", "wrong only outside [0, 1]"]),
        mistake("the cubic without the clamp", """
            class SmoothStep(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return 3 * x ** 2 - 2 * x ** 3

                @staticmethod
                def backward(ctx, grad_out):
                    (x,) = ctx.saved_tensors
                    return grad_out * 6 * x * (1 - x)
        """, feedback=["SmoothStep.apply(x)", "wrong values"]),
    ],
    "02.2": [
        correct("one sum over a tuple of dims, then one with keepdim", """
            def sum_to_shape(grad, shape):
                shape = tuple(shape)
                lead = grad.dim() - len(shape)
                if lead < 0 or any(s != 1 and s != g for s, g in zip(shape, grad.shape[lead:])):
                    raise RuntimeError(f"gradient of shape {tuple(grad.shape)} cannot be summed to {shape}")
                if lead:
                    grad = grad.sum(dim=tuple(range(lead)))
                dims = tuple(i for i, s in enumerate(shape) if s == 1 and grad.shape[i] != 1)
                return grad.sum(dim=dims, keepdim=True) if dims else grad
        """),
        correct("one dimension at a time, in a loop (the message keeps grad's original shape)", """
            def sum_to_shape(grad, shape):
                shape, original = tuple(shape), list(grad.shape)
                if len(shape) > grad.dim():
                    raise RuntimeError(f"shape {shape} has more dimensions than the gradient "
                                       f"{tuple(grad.shape)}")
                while grad.dim() > len(shape):
                    grad = grad.sum(0)
                for dim, size in enumerate(shape):
                    if size == 1:
                        grad = grad.sum(dim, keepdim=True)
                    elif size != grad.shape[dim]:
                        raise RuntimeError(f"shape {list(shape)} does not broadcast to {original}")
                return grad
        """),
        mistake("keepdim forgotten: the size-1 dims disappear", """
            def sum_to_shape(grad, shape):
                shape = tuple(shape)
                lead = grad.dim() - len(shape)
                if lead < 0 or any(s not in (1, g) for s, g in zip(shape, grad.shape[lead:])):
                    raise RuntimeError(f"cannot sum {tuple(grad.shape)} to {shape}")
                if lead:
                    grad = grad.sum(dim=tuple(range(lead)))
                dims = tuple(i for i, s in enumerate(shape) if s == 1 and grad.shape[i] != 1)
                return grad.sum(dim=dims) if dims else grad
        """, feedback=["sum_to_shape(g, (4, 1))", "wrong shape", "keepdim=True"]),
        mistake("only the leading dims summed", """
            def sum_to_shape(grad, shape):
                shape = tuple(shape)
                lead = grad.dim() - len(shape)
                if lead < 0 or any(s not in (1, g) for s, g in zip(shape, grad.shape[lead:])):
                    raise RuntimeError(f"cannot sum {tuple(grad.shape)} to {shape}")
                return grad.sum(dim=tuple(range(lead))) if lead else grad
        """, feedback=["sum_to_shape(g, (4, 1))", "wrong shape"]),
        mistake("an error message without the shapes", """
            def sum_to_shape(grad, shape):
                shape = tuple(shape)
                lead = grad.dim() - len(shape)
                if lead < 0 or any(s not in (1, g) for s, g in zip(shape, grad.shape[lead:])):
                    raise RuntimeError("these shapes do not broadcast")
                if lead:
                    grad = grad.sum(dim=tuple(range(lead)))
                dims = tuple(i for i, s in enumerate(shape) if s == 1 and grad.shape[i] != 1)
                return grad.sum(dim=dims, keepdim=True) if dims else grad
        """, feedback=["message of sum_to_shape", "leaves out grad's shape, (2, 3)",
                       "the shape asked for, (4,)"]),
        mistake("no error for a shape that does not broadcast", """
            def sum_to_shape(grad, shape):
                shape = tuple(shape)
                while grad.dim() > len(shape):
                    grad = grad.sum(0)
                for dim, size in enumerate(shape):
                    if size == 1:
                        grad = grad.sum(dim, keepdim=True)
                return grad
        """, feedback=["sum_to_shape(grad of shape (2, 3), (4,))", "no exception raised"]),
        mistake("the engine's own sum_to_shape", """
            from learntorch.ops import broadcast

            def sum_to_shape(grad, shape):
                return broadcast.sum_to_shape(grad, tuple(shape))
        """, feedback=["broadcast.sum_to_shape", "rules out"]),
    ],
}
