"""The "how" checks: rules about how the learner's code does its job (what it may use,
what it may call, what an error message names, what a custom Function saves) are
enforced from plain observations, and the feedback names the rule and what broke it."""
import math
import textwrap

import pytest

import learntorch
import learntorch.nn.functional as F
from course.checks import (ExerciseCheckFailed, check_error_mentions, check_not_called,
                           check_not_used, check_saved_for_backward)
from course.observe import missing_mentions, uses
from oracle import require_torch


def failure(check, *args, **kwargs):
    with pytest.raises(ExerciseCheckFailed) as info:
        check(*args, **kwargs)
    return str(info.value)


def learner_code(source, **namespace):
    """Define the functions of ``source`` as a notebook cell would (its own globals)."""
    scope = {"F": F, "torch": learntorch, "math": math, **namespace}
    exec(compile(textwrap.dedent(source), "<cell>", "exec"), scope)
    return scope


LOSSES = ["F.cross_entropy", "F.log_softmax", "F.nll_loss", "logsumexp"]
RULE = "build it from max, exp, sum, log and indexing"


# ---- reading the code ---------------------------------------------------------------------

def test_the_code_reading_finds_a_forbidden_function_by_name_and_line():
    cell = learner_code("""
        def loss(logits, target):
            return F.cross_entropy(logits, target)
    """)
    assert uses(cell["loss"], LOSSES) == ["F.cross_entropy (line 3)"]


def test_the_code_reading_finds_a_forbidden_function_under_another_name():
    cell = learner_code("""
        ce = F.cross_entropy

        def loss(logits, target):
            return ce(logits, target)
    """)
    assert uses(cell["loss"], LOSSES) == ["ce (= F.cross_entropy) (line 5)"]


def test_the_code_reading_finds_methods_imports_and_nested_functions():
    cell = learner_code("""
        def loss(logits, target):
            import learntorch.nn.functional as G
            pick = lambda z: z.logsumexp(dim=1)
            return G.nll_loss(logits, target) + pick(logits).mean()
    """)
    found = uses(cell["loss"], LOSSES)
    assert "z.logsumexp (line 4)" in found and "G.nll_loss (line 5)" in found


def test_the_code_reading_finds_an_attribute_of_a_computed_value():
    cell = learner_code("""
        def df_dx(x):
            t = torch.tensor(x, requires_grad=True)
            f(t).backward()
            return t.grad.item()
    """, f=lambda t: t * t)
    assert uses(cell["df_dx"], ["backward", "grad"]) == [".backward (line 4)",
                                                          "t.grad.item (line 5)"]


def test_local_variables_are_never_taken_for_the_names_of_the_program():
    cell = learner_code("""
        def df_dx(x):
            grad = 3 * x ** 2 - 4        # a local called grad is not x.grad
            return grad
    """)
    assert uses(cell["df_dx"], ["grad", "backward"]) == []


def test_the_code_reading_covers_every_method_a_class_defines():
    cell = learner_code("""
        class Step(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clamp(0, 1)

            @staticmethod
            def backward(ctx, g):
                return torch.autograd.grad(g, g)
    """)
    assert uses(cell["Step"], ["autograd"]) == ["torch.autograd.grad (line 9)"]


def test_check_not_used_passes_quietly_and_fails_naming_the_use_and_the_rule(capsys):
    cell = learner_code("""
        def stable(logits, target):
            m = logits.max(dim=1, keepdim=True).values
            log_p = logits - m - (logits - m).exp().sum(dim=1, keepdim=True).log()
            return -log_p[torch.arange(len(target)), target].mean()

        def ready_made(logits, target):
            return F.cross_entropy(logits, target)
    """)
    check_not_used(cell["stable"], LOSSES, rule=RULE, exercise="04.1")
    assert capsys.readouterr().out == "✓ 04.1 passed\n"
    message = failure(check_not_used, cell["ready_made"], LOSSES, rule=RULE, exercise="04.1")
    assert message.splitlines()[0] == (
        "04.1 ready_made uses F.cross_entropy (line 8), which the exercise rules out: "
        f"{RULE} (the check reads the code of ready_made): wrong result")
    assert "got:      str: 'F.cross_entropy (line 8)'" in message


# ---- watching the calls -------------------------------------------------------------------

def test_check_not_called_sees_calls_made_by_helpers_and_modules():
    cell = learner_code("""
        def helper(logits, target):
            return F.cross_entropy(logits, target)

        def through_a_helper(logits, target):
            return helper(logits, target)

        def through_a_module(logits, target):
            return torch.nn.CrossEntropyLoss()(logits, target)
    """)
    logits, target = learntorch.randn(3, 4), learntorch.tensor([0, 3, 1])
    watched = ["F.cross_entropy", "torch.nn.CrossEntropyLoss.forward"]
    message = failure(check_not_called, cell["through_a_helper"], (logits, target), watched,
                      rule=RULE)
    assert message.startswith("through_a_helper called F.cross_entropy, which the exercise "
                              "rules out")
    assert "(the check watched the calls through_a_helper made)" in message
    assert "input:    through_a_helper argument 1 = learntorch Tensor, shape (3, 4)" in message
    message = failure(check_not_called, cell["through_a_module"], (logits, target), watched,
                      rule=RULE)
    assert message.startswith("through_a_module called torch.nn.CrossEntropyLoss.forward")


def test_check_not_called_puts_every_function_back_and_returns_what_the_code_returned():
    original = F.log_softmax
    cell = learner_code("""
        def fine(logits):
            return logits.exp().sum()
    """)
    result = check_not_called(cell["fine"], (learntorch.zeros(2),), ["F.log_softmax",
                                                                     "torch.Tensor.logsumexp"],
                              rule=RULE)
    assert result.item() == 2.0
    assert F.log_softmax is original and "logsumexp" in vars(learntorch.Tensor)
    with pytest.raises(ZeroDivisionError):  # the learner's own error passes through ...
        check_not_called(lambda: 1 / 0, (), ["F.log_softmax"], rule=RULE)
    assert F.log_softmax is original          # ... and the spy is gone all the same


# ---- what an error message names ----------------------------------------------------------

def test_missing_mentions_reads_shapes_and_numbers_the_ways_people_write_them():
    facts = {"a": (2, 3), "b": (4,), "dim": [1, -1]}
    assert missing_mentions("shapes (2, 3) and (4,) at dim 1", facts) == []
    assert missing_mentions("torch.Size([2, 3]) vs [4] (dimension -1)", facts) == []
    assert missing_mentions("(2,3) vs (4) in dimension 10", facts) == ["dim"]
    assert missing_mentions("a (2, 3, 5) and b (14,)", facts) == ["a", "b", "dim"]


def test_check_error_mentions_names_the_facts_the_message_leaves_out():
    def terse(grad, shape):
        raise RuntimeError("cannot sum to that shape")

    def clear(grad, shape):
        raise RuntimeError(f"cannot sum a gradient of shape {tuple(grad.shape)} to {shape}")

    facts = {"the gradient's shape (2, 3)": (2, 3), "the shape asked for (4,)": (4,)}
    check_error_mentions(clear, (learntorch.ones(2, 3), (4,)), raises=RuntimeError,
                         mentions=facts)
    message = failure(check_error_mentions, terse, (learntorch.ones(2, 3), (4,)),
                      raises=RuntimeError, mentions=facts)
    assert message.splitlines()[0] == "the RuntimeError message of terse: wrong result"
    assert "its message = str: 'cannot sum to that shape'" in message
    assert ("got:      str: \"leaves out the gradient's shape (2, 3) and the shape asked for "
            "(4,)\"") in message
    # no exception at all is check_raises's failure
    assert "no exception raised" in failure(check_error_mentions, lambda g, s: g,
                                            (1, 2), raises=RuntimeError, mentions=facts)


# ---- what a custom Function saves ---------------------------------------------------------

FUNCTIONS = """
    class Saves(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class KeepsOnCtx(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x
            return x * x

        @staticmethod
        def backward(ctx, g):
            return 2 * ctx.x * g
"""


@pytest.mark.parametrize("library", ["learntorch", "torch"])
def test_check_saved_for_backward_reads_the_recorded_node(library):
    torch = learntorch if library == "learntorch" else require_torch()
    cell = learner_code(FUNCTIONS, torch=torch)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    check_saved_for_backward(cell["Saves"].apply(x))
    message = failure(check_saved_for_backward, cell["KeepsOnCtx"].apply(x), name="Square")
    assert message.splitlines()[0] == (
        "Square: tensors kept as attributes of ctx instead of saved with ctx.save_for_backward "
        "(read from the recorded node, output.grad_fn): wrong result")
    assert "got:      str: 'ctx.x'" in message
    assert "not part of a recorded graph" in failure(check_saved_for_backward, torch.ones(2))


def test_the_examples_in_the_observation_module_hold():
    import doctest

    import course.observe

    results = doctest.testmod(course.observe)
    assert results.attempted >= 5 and results.failed == 0
