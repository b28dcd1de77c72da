"""Custom ``autograd.Function``s written exactly as in torch's documentation.

Each program is run twice, once with ``learntorch`` and once with ``torch`` as
the module ``m``; values, gradients, node names and errors must agree.
"""
import numpy as np
import pytest
from hypothesis import given

import learntorch
from oracle import assert_same, both, arrays, as_numpy, require_torch




def error_of(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.value


# ---------------------------------------------------------------- the torch-docs examples
def exp_function(m):
    class Exp(m.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            result, = ctx.saved_tensors
            return grad_output * result
    return Exp


def mul_constant(m):
    """A Function with a non-tensor argument, whose gradient is None."""
    class MulConstant(m.autograd.Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None
    return MulConstant


def linear_function(m):
    """torch's LinearFunction example: three inputs, optional bias, needs_input_grad."""
    class LinearFunction(m.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias
    return LinearFunction


@given(arrays(dtype=np.float64, max_dims=3))
def test_exp_function_matches_torch_on_strided_inputs(a):
    def program(m):
        x = m.from_numpy(a.copy()).requires_grad_()
        y = exp_function(m).apply(x)
        y.backward(m.ones_like(y) * 0.5)
        return y, x.grad, y.grad_fn.name()
    lt, th = both(program)
    assert_same(lt, th)
    assert lt[2] == "ExpBackward"  # torch: "<ClassName>Backward" for a Python Function


def test_non_tensor_argument_gets_no_gradient_and_is_not_an_input():
    def program(m):
        x = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = mul_constant(m).apply(x, 2.5)
        (y * y).sum().backward()
        return x.grad, len(y.grad_fn.next_functions), y.grad_fn.name()
    assert_same(*both(program))


@pytest.mark.parametrize("which", [(True, True, True), (True, False, True), (False, True, False),
                                   (True, True, None)])
def test_linear_function_needs_input_grad_selects_gradients(which):
    rng = np.random.default_rng(3)
    arrays_in = [rng.standard_normal(s) for s in [(4, 3), (2, 3), (2,)]]

    def program(m):
        seen = []
        inputs = []
        for arr, wants in zip(arrays_in, which):
            if wants is None:
                inputs.append(None)
            else:
                inputs.append(m.tensor(arr, requires_grad=wants))
        Linear = linear_function(m)

        class Spy(Linear):
            @staticmethod
            def backward(ctx, grad_output):
                seen.append(tuple(ctx.needs_input_grad))
                return Linear.backward(ctx, grad_output)
        out = Spy.apply(*inputs)
        out.backward(m.tensor(np.arange(8.0).reshape(4, 2)))
        return out, seen, [None if t is None else t.grad for t in inputs]
    lt, th = both(program)
    assert_same(lt[0], th[0], "output")
    assert lt[1] == th[1], f"needs_input_grad {lt[1]} != torch's {th[1]}"
    assert_same(lt[2], th[2], "gradients")


def test_multiple_outputs_get_one_gradient_each_and_zeros_for_unused_ones():
    def program(m):
        received = []

        class SplitScale(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                received.append((g1.clone(), g2.clone()))
                return g1 * 2 + g2 * 3
        x = m.tensor([1.0, 2.0], requires_grad=True)
        a, b = SplitScale.apply(x)
        (a.sum() + 2 * b.sum()).backward()
        both_used = x.grad.clone()
        x.grad = None
        a, b = SplitScale.apply(x)
        a.sum().backward()  # b unused: its gradient is materialized as zeros
        return both_used, x.grad, received, a.grad_fn is b.grad_fn, (a.output_nr, b.output_nr)
    assert_same(*both(program))


def test_set_materialize_grads_false_passes_none_for_unused_outputs():
    def program(m):
        received = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                received.append(g2)
                return g1 * 2
        x = m.tensor([1.0, 2.0], requires_grad=True)
        Two.apply(x)[0].sum().backward()
        return received, x.grad
    assert_same(*both(program))


def test_mark_non_differentiable_output_does_not_require_grad():
    def program(m):
        class MaxAndIndex(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = x.argmax()
                ctx.mark_non_differentiable(idx)
                ctx.save_for_backward(x, idx)
                return x.amax(), idx

            @staticmethod
            def backward(ctx, g, g_idx):
                x, idx = ctx.saved_tensors
                grad = m.zeros_like(x)
                grad[idx] = g
                return grad
        x = m.tensor([1.0, 5.0, 2.0], requires_grad=True)
        value, idx = MaxAndIndex.apply(x)
        value.backward()
        return idx.requires_grad, idx.grad_fn is None, value.requires_grad, x.grad, idx
    assert_same(*both(program))


def test_forward_runs_without_recording_and_sees_grad_mode_off():
    def program(m):
        inside = []

        class Probe(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                inside.append((m.is_grad_enabled(), y.requires_grad))
                return y

            @staticmethod
            def backward(ctx, g):
                return g * 2
        Probe.apply(m.tensor([1.0], requires_grad=True))
        return inside
    assert_same(*both(program))


def test_needs_input_grad_is_readable_in_forward_even_under_no_grad():
    def program(m):
        seen = []

        class Probe(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                seen.append(tuple(ctx.needs_input_grad))
                return x * y * k

            @staticmethod
            def backward(ctx, g):
                return None, g, None
        x, y = m.tensor([1.0]), m.tensor([2.0], requires_grad=True)
        Probe.apply(x, y, 3)
        with m.no_grad():
            out = Probe.apply(x, y, 3)
        return seen, out.requires_grad
    assert_same(*both(program))


def test_keyword_arguments_become_inputs_that_need_a_gradient_slot():
    def program(m):
        class Scale(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2.0):
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None
        x = m.tensor([1.0, 2.0], requires_grad=True)
        Scale.apply(x, k=3.0).sum().backward()
        return x.grad
    assert_same(*both(program))


def test_returning_an_input_unchanged_gives_a_new_tensor_and_keeps_the_leaf_a_leaf():
    def program(m):
        class Identity(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = Identity.apply(x)
        y.sum().backward()
        return y is x, x.is_leaf, x.grad_fn is None, y.grad_fn.name(), x.grad
    assert_same(*both(program))


def test_mark_dirty_rebases_the_modified_input_and_refuses_leaves():
    def program(m):
        class DoubleInPlace(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = m.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1
        out = DoubleInPlace.apply(h)
        out.sum().backward()
        err = error_of(lambda: DoubleInPlace.apply(m.tensor([1.0], requires_grad=True)))
        return out is h, h.grad_fn.name(), x.grad, type(err).__name__
    assert_same(*both(program))


def test_forward_may_return_a_non_tensor():
    def program(m):
        class Norm(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return 3.0

            @staticmethod
            def backward(ctx, g):
                return g
        return Norm.apply(m.tensor([1.0], requires_grad=True))
    assert_same(*both(program))


def test_backward_may_return_extra_trailing_nones():
    def program(m):
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, None
        x = m.tensor([1.0, 2.0], requires_grad=True)
        Twice.apply(x).sum().backward()
        return x.grad
    assert_same(*both(program))


def test_gradient_in_another_dtype_is_cast_to_the_input_dtype():
    def program(m):
        class Wide(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g.double()
        x = m.tensor([1.0, 2.0], requires_grad=True)
        Wide.apply(x).sum().backward()
        return x.grad
    assert_same(*both(program))


# ---------------------------------------------------------------- wrong backward answers
def _bad_functions(m):
    class WrongShape(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g[:1]

    class TooMany(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    class TooFew(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g
    return {"shape": WrongShape, "too_many": TooMany, "too_few": TooFew}


@pytest.mark.parametrize("kind", ["shape", "too_many", "too_few"])
def test_wrong_gradients_raise_torchs_runtime_error(kind):
    def program(m):
        fn = _bad_functions(m)[kind]
        x = m.tensor([1.0, 2.0], requires_grad=True)
        args = (x, x) if kind == "too_few" else (x,)
        return error_of(lambda: fn.apply(*args).sum().backward())
    lt, th = both(program)
    assert type(lt) is type(th) is RuntimeError
    # torch's message first (so searches for it find answers), then what to do
    assert str(lt).startswith(str(th)), f"{lt} vs torch's {th}"


def test_wrong_shape_message_names_both_shapes():
    fn = _bad_functions(learntorch)["shape"]
    x = learntorch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"WrongShapeBackward.*got \[1\].*compatible with \[2\]"):
        fn.apply(x).sum().backward()


def test_calling_a_function_instance_is_an_error_that_points_to_apply():
    Exp = exp_function(learntorch)
    with pytest.raises(RuntimeError, match=r"Exp\.apply"):
        Exp()(learntorch.tensor([1.0], requires_grad=True))


def test_saved_tensors_can_be_read_once_per_backward_and_not_after():
    def program(m):
        Exp = exp_function(m)
        x = m.tensor([0.5], requires_grad=True)
        y = Exp.apply(x)
        y.backward(retain_graph=True)
        y.backward()  # the retained graph allows a second pass
        err = error_of(lambda: y.backward())
        return x.grad, type(err).__name__, "second time" in str(err)
    assert_same(*both(program))


def test_a_subclass_of_a_builtin_op_with_its_own_forward_records_nothing_inside_it():
    from learntorch.ops.arithmetic import Mul

    class MulThenExp(Mul):  # a new forward built from tensor ops: they must not be recorded
        @staticmethod
        def forward(ctx, a, b):
            product = a * b
            ctx.inner_requires_grad = product.requires_grad
            ctx.save_for_backward(a, b)
            return product.exp()

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            y = (a * b).exp()
            return grad * y * b, grad * y * a

    from learntorch._fast.apply import ARRAYS_ONLY
    assert Mul in ARRAYS_ONLY and MulThenExp not in ARRAYS_ONLY  # keyed by the exact class
    x = learntorch.tensor([0.5, 1.0], requires_grad=True)
    out = MulThenExp.apply(x, learntorch.tensor([2.0, 3.0]))
    assert out.grad_fn.inner_requires_grad is False
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 3.0]) * [2.0, 3.0], rtol=1e-6)
