"""Learner variants of chapter 00 (welcome), exercise 00.1: a derivative by hand.

The text asks for f'(x) of f(x) = x**3 - 4*x + 1 as a number, in plain arithmetic on x:
not autograd, and not f itself.  See course/variants.py for the format.
"""
from course.variants import correct, mistake

VARIANTS = {
    "00.1": [
        correct("the power rule, written out", """
            def df_dx(x):
                return 3 * x * x - 4
        """),
        correct("a float, through a helper", """
            def power_rule(coefficient, power, x):
                return coefficient * power * x ** (power - 1)


            def df_dx(x):
                return float(power_rule(1, 3, x) + power_rule(-4, 1, x))
        """),
        mistake("autograd: backward() on a tensor that requires grad", """
            def df_dx(x):
                t = torch.tensor(x, requires_grad=True)
                f(t).backward()
                return t.grad.item()
        """, feedback=["backward", "rules out", "not autograd"]),
        mistake("autograd: torch.autograd.grad", """
            def df_dx(x):
                t = torch.tensor(float(x), requires_grad=True)
                (slope,) = torch.autograd.grad(f(t), t)
                return slope.item()
        """, feedback=["torch.autograd.grad", "rules out"]),
        mistake("finite differences of f instead of the derivative", """
            def df_dx(x, h=1e-6):
                return (f(x + h) - f(x - h)) / (2 * h)
        """, feedback=["uses f", "not f itself"]),
        mistake("the constant's derivative kept: 3x² - 4 + 1", """
            def df_dx(x):
                return 3 * x ** 2 - 4 + 1
        """, feedback=["df_dx(2.0)", "wrong values", "expected: float 8.0"]),
        mistake("the x term forgotten: 3x²", """
            def df_dx(x):
                return 3 * x ** 2
        """, feedback=["df_dx(2.0)", "wrong values"]),
        mistake("a tensor returned instead of a number", """
            def df_dx(x):
                return torch.tensor(3 * x ** 2 - 4)
        """, feedback=["returns a number", "not a tensor"]),
    ],
}
