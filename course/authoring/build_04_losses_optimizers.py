"""Write course/solutions/04_losses_optimizers.ipynb, the instructor source of chapter 04.

    python course/authoring/build_04_losses_optimizers.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("04", "losses_optimizers")

ch.markdown(r"""
# 04 · Losses and optimizers: what to minimise, and how to step

Training has two halves. A **loss** turns the model's output into one number that says how wrong it
is; autograd (chapter 02) gives the gradient of that number with respect to every weight. An
**optimizer** turns the gradients into a step: how far, and in which direction, each weight moves.
This chapter looks inside both, and finds out why the details matter.

**After this chapter you can**

- compute mean squared error and cross-entropy by hand, and say why cross-entropy trains
  classifiers better (its gradient, probabilities minus targets, never fades);
- explain why `log(softmax(x))` gives `-inf` and `nan` for logits like ±1000, and compute
  log-softmax stably with the log-sum-exp trick;
- write the update rules of SGD, momentum, Nesterov momentum and Adam, and find their running
  averages in an optimizer's `state`;
- race optimizers across a loss surface, and predict from the learning rate and the momentum
  whether SGD with momentum converges, oscillates or diverges;
- write a stable cross-entropy and an Adam step yourself.
""")

ch.code(r"""
import learntorch as torch          # the same code runs on PyTorch: write `import torch` instead
import learntorch.nn.functional as F

torch.manual_seed(0)                # every random number below is repeatable
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.markdown(r"""
> **Same code, real PyTorch.** Every code cell of this chapter runs unchanged with `import torch` and
> `import torch.nn.functional as F`, and prints the same, except the cells whose first line says
> otherwise: `# learntorch only: ...` (the widgets) or `# on PyTorch: ...` (what prints differently).

## 1 · Two losses: mean squared error and cross-entropy

**Regression** (predict a number): the mean squared error averages the squared differences,
$\text{MSE} = \frac{1}{N}\sum_i (\hat y_i - y_i)^2$.
""")

ch.code(r"""
prediction = torch.tensor([2.5, 0.0, 2.0, 8.0])
truth = torch.tensor([3.0, -0.5, 2.0, 7.0])

print("F.mse_loss:", F.mse_loss(prediction, truth).item())
print("by hand:   ", ((prediction - truth) ** 2).mean().item())
print("reduction='none':", F.mse_loss(prediction, truth, reduction="none"))
""")

ch.markdown(r"""
**Classification** (pick one of $C$ classes): the model outputs $C$ scores per sample, the
**logits**. Softmax turns them into probabilities, $p_j = e^{z_j} / \sum_k e^{z_k}$, and
cross-entropy is minus the log of the probability given to the right class, averaged over the
batch: $\text{CE} = -\frac{1}{N}\sum_i \log p_{i, y_i}$. The targets are class **indices**
(int64), not one-hot vectors.
""")

ch.code(r"""
logits = torch.tensor([[2.0, -1.0, 0.5],       # sample 0: thinks class 0
                       [0.1, 0.2, 3.0]],       # sample 1: thinks class 2
                      requires_grad=True)
target = torch.tensor([0, 1])                  # sample 1 is really class 1

probs = torch.softmax(logits, dim=1)
by_hand = -torch.log(probs[torch.arange(2), target]).mean()   # fine for small logits: see section 2
loss = F.cross_entropy(logits, target)
print("probabilities:\n", probs.detach())
print("F.cross_entropy:", loss.item(), "  by hand:", by_hand.item())
""")

ch.markdown(r"""
The gradient of cross-entropy with respect to the logits is remarkably simple: **probabilities
minus the one-hot target**, divided by $N$ for the mean. Sample 0, already right, gets a small
push; sample 1, wrong, a big one.
""")

ch.code(r"""
loss.backward()
one_hot = F.one_hot(target, num_classes=3).float()
print("autograd:           \n", logits.grad)
print("(probs - one_hot)/N:\n", (probs.detach() - one_hot) / 2)
""")

ch.markdown(r"""
Why not use MSE between the probabilities and the one-hot target? Watch the gradient as a model
becomes more and more confidently **wrong** (target class 0, logits $(0, m)$). With MSE the softmax
saturates and the gradient fades to nothing, just when the model most needs correcting;
cross-entropy's $p - y$ stays large.
""")

ch.code(r"""
target0 = torch.tensor([0])
print("margin of the wrong class   |grad| with MSE on probabilities   |grad| with cross-entropy")
for margin in (0.0, 2.0, 5.0, 10.0):
    z = torch.tensor([[0.0, margin]], requires_grad=True)
    F.mse_loss(torch.softmax(z, dim=1), F.one_hot(target0, num_classes=2).float()).backward()
    mse_grad = z.grad.norm().item()
    z.grad = None
    F.cross_entropy(z, target0).backward()
    print(f"{margin:24.0f}   {mse_grad:35.6f}   {z.grad.norm().item():24.4f}")
""")

ch.markdown(r"""
## 2 · log(softmax) and the numbers a computer cannot hold

Logits are unbounded, and an untrained or diverging model can produce huge ones. `float32` holds
numbers up to about $3.4 \cdot 10^{38}$, and $e^{89}$ is already more. Try the formula on logits of
±1000:
""")

ch.code(r"""
z = torch.tensor([[1000.0, -1000.0, 0.0]], requires_grad=True)

exps = torch.exp(z)                            # e^1000 = inf,  e^-1000 = 0
print("exp:                    ", exps)
print("log(exp / sum exp):     ", torch.log(exps / exps.sum(dim=1, keepdim=True)))
print("log(torch.softmax(z)):  ", torch.log(torch.softmax(z, dim=1)))
""")

ch.markdown(r"""
The first formula computes $\infty / \infty$ = `nan`. `torch.softmax` itself is careful (next
paragraph), but its tiny probabilities round to exactly 0, whose log is $-\infty$: a loss of
`inf` for a sample whose right class is 1. Backward is worse: it multiplies $1/p = \infty$ by 0,
and one `nan` in a gradient spreads to every weight at the next step.
""")

ch.code(r"""
torch.log(torch.softmax(z, dim=1))[0, 0].backward()    # even the entry that looked fine, 0
print("gradient through log(softmax):", z.grad)
""")

ch.markdown(r"""
The fix is a little algebra. Subtracting any constant $m$ from every logit changes nothing:

$$\log p_j = z_j - \log \sum_k e^{z_k} = (z_j - m) - \log \sum_k e^{z_k - m}.$$

Choose $m = \max_k z_k$. Then every $z_k - m \le 0$, so no exponential overflows, and the largest
one is $e^0 = 1$, so the sum is at least 1 and its log is finite. This is the **log-sum-exp trick**;
`F.log_softmax` uses it, and `F.cross_entropy` is `F.log_softmax` followed by picking the target
entries (`F.nll_loss`), so it never computes the naive form:
""")

ch.code(r"""
z = torch.tensor([[1000.0, -1000.0, 0.0]], requires_grad=True)
print("F.log_softmax:", F.log_softmax(z, dim=1))

loss = F.cross_entropy(z, torch.tensor([2]))
loss.backward()
print("F.cross_entropy:", loss.item(), "| gradient:", z.grad)
print("same as nll_loss(log_softmax):", F.nll_loss(F.log_softmax(z, dim=1), torch.tensor([2])).item())
""")

ch.markdown(r"""
## 3 · Optimizers: from gradients to a step

Every optimizer is used the same way, in the loop you will write for every model:

```python
optimizer.zero_grad()          # gradients add up (chapter 02): clear them
loss = loss_fn(model(x), y)
loss.backward()                # fills p.grad for every parameter
optimizer.step()               # moves every parameter, using p.grad
```

To see the rules without a model, descend a bowl in two dimensions,
$\text{loss}(p) = \tfrac12 (p_0^2 + 10\, p_1^2)$: ten times steeper along $p_1$ than along $p_0$
(its *condition number* is 10), with its minimum at $(0, 0)$.

**SGD** takes a step against the gradient, scaled by the learning rate: $p \leftarrow p - \text{lr}
\cdot g$. By hand and with `torch.optim.SGD`:
""")

ch.code(r"""
def bowl(p):
    return 0.5 * (p[0] ** 2 + 10 * p[1] ** 2)


def descend(make_optimizer, steps=5, start=(1.0, 1.0)):
    # the training loop on the bowl; returns the point reached, the optimizer, and the
    # parameter itself (the key of optimizer.state)
    p = torch.tensor(start, requires_grad=True)
    optimizer = make_optimizer([p])
    for _ in range(steps):
        optimizer.zero_grad()
        bowl(p).backward()
        optimizer.step()
    return p.detach(), optimizer, p


p = torch.tensor([1.0, 1.0], requires_grad=True)
for _ in range(5):
    p.grad = None
    bowl(p).backward()
    with torch.no_grad():                      # the update itself must not be recorded
        p -= 0.05 * p.grad

print("by hand:  ", p.detach())
print("optim.SGD:", descend(lambda params: torch.optim.SGD(params, lr=0.05))[0])
""")

ch.markdown(r"""
**Momentum** keeps a running sum of past gradients, a velocity $v$, and steps along it:

$$v \leftarrow \mu v + g, \qquad p \leftarrow p - \text{lr}\cdot v.$$

Along a direction where the gradient keeps its sign, the steps grow up to $1/(1-\mu)$ times
(10 times for $\mu = 0.9$); where it flips back and forth, they cancel. The velocity is optimizer
**state**, stored per parameter in `optimizer.state[p]`:
""")

ch.code(r"""
p = torch.tensor([1.0, 1.0], requires_grad=True)
velocity = torch.zeros(2)
for _ in range(5):
    p.grad = None
    bowl(p).backward()
    with torch.no_grad():
        velocity = 0.9 * velocity + p.grad
        p -= 0.05 * velocity

point, optimizer, param = descend(lambda params: torch.optim.SGD(params, lr=0.05, momentum=0.9))
print("by hand:  ", p.detach(), " velocity", velocity)
print("optim.SGD:", point, " state", optimizer.state[param])
""")

ch.markdown(r"""
**Nesterov momentum** (`nesterov=True`) looks one step ahead: it steps along $g + \mu v$ with the
freshly updated $v$, so it starts braking before it overshoots.

**Adam** keeps two running averages per parameter element: of the gradient, $m$ (momentum), and
of its square, $v$ (how big the gradient usually is). With $t$ the step count:

$$m \leftarrow \beta_1 m + (1 - \beta_1)\, g, \qquad v \leftarrow \beta_2 v + (1 - \beta_2)\, g^2,$$
$$\hat m = \frac{m}{1 - \beta_1^t}, \qquad \hat v = \frac{v}{1 - \beta_2^t}, \qquad
p \leftarrow p - \text{lr} \cdot \frac{\hat m}{\sqrt{\hat v} + \varepsilon}.$$

Both averages start at 0, so early on they are too small; dividing by $1 - \beta^t$ undoes that
bias. Dividing $\hat m$ by $\sqrt{\hat v}$ gives every element its own step size: the step is
about `lr` whether the gradient is 1000 or 0.001. Look at the first step:
""")

ch.code(r"""
p = torch.tensor([1.0, 1.0], requires_grad=True)
adam = torch.optim.Adam([p], lr=0.1)
p.grad = torch.tensor([1000.0, 0.001])         # wildly different gradient sizes
adam.step()
print("after one Adam step:", p.detach(), " (each coordinate moved by lr = 0.1)")
print("Adam's state:", {key: value for key, value in adam.state[p].items()})
""")

ch.markdown(r"""
## 4 · See it: optimizers racing across a loss surface

`OptimizerExplorer` runs real `torch.optim` optimizers side by side on a two-parameter surface,
the same loop as above, and draws their paths. Below is the Rosenbrock function: a long, curved,
nearly flat valley with steep walls, minimum at $(1, 1)$. Press **Play**, change learning rates and
momentums with the sliders, tick other optimizers on and off. The paths replay from the start
whenever you change something.
""")

ch.code(r"""
from widgets import OptimizerExplorer

explorer = OptimizerExplorer("rosenbrock", optimizers=["SGD", "Momentum", "Nesterov", "Adam"])
explorer.step(300)
explorer
""", learntorch_only="OptimizerExplorer is one of learntorch's widgets")

ch.markdown(r"""
The explorer is a Python object too: `step`, `set_hyper`, `select`, `trajectories` (every point
visited) and `losses`. Its text shows each optimizer's loss after 300 steps. SGD crawls along the
flat valley floor. Could a bigger learning rate help? Try it:
""")

ch.code(r"""
explorer.set_hyper("SGD", lr=0.003)
print(explorer)
explorer.set_hyper("SGD", lr=0.001)            # back to the default
print("where each optimizer got to:")
for name, path in explorer.trajectories.items():
    print(f"  {name:9s} {path[-1].round(3)}")
""", learntorch_only="OptimizerExplorer is one of learntorch's widgets")

ch.markdown(r"""
SGD's learning rate is limited by the **steepest** direction: a step that is fine along the valley
floor overshoots across the steep walls, and overshoots more each time. Momentum gets around it: a
small learning rate keeps it stable across the walls, while the velocity builds up along the floor,
where the gradient keeps pointing the same way. Adam sizes each coordinate's step separately.
Try it in the explorer: give Momentum and Nesterov a learning rate of 0.001, and they get much closer to the
minimum within 300 steps (loss about 0.01 to 0.03).

## 5 · Momentum's three regimes

On a quadratic bowl the story can be told exactly. Along a direction of curvature $h$, the error
$e$ of SGD with momentum follows $e_{t+1} = (1 + \mu - \text{lr}\, h)\, e_t - \mu\, e_{t-1}$, and
depending on `lr` and $\mu$ the run does one of three things:

- **converges** smoothly (small learning rate, little momentum);
- **oscillates**: swings back and forth across the minimum while it converges (much momentum,
  or a learning rate close to the limit);
- **diverges**: each swing bigger than the one before, once $\text{lr} > 2(1 + \mu)/h$.

The explorer's phase view (the accordion at the bottom of the quadratic explorer below) **runs** SGD
with momentum for every pair of learning rate and momentum on a grid, colours each by what
happened, and draws the theory's boundaries on top as dashed lines. The star is the Momentum run's
own setting.
""")

ch.code(r"""
bowl_explorer = OptimizerExplorer("quadratic", condition_number=10,
                                  optimizers=["SGD", "Momentum", "Nesterov", "Adam"])
bowl_explorer.step(60)
bowl_explorer
""", learntorch_only="OptimizerExplorer is one of learntorch's widgets")

ch.code(r"""
phases = bowl_explorer.momentum_phase()        # 50 momentums x 60 learning rates, 200 steps each
phases
""", learntorch_only="OptimizerExplorer is one of learntorch's widgets")

ch.markdown(r"""
Notice the shape: more momentum tolerates a **larger** learning rate (the divergence boundary
moves right, up to $4/h$ for $\mu \to 1$), but the smooth-convergence region shrinks, because
momentum makes every run swing. The same grid, cell by cell: a run at each corner of the picture.
""")

ch.code(r"""
corners = bowl_explorer.momentum_phase(lrs=[0.02, 0.25], momentums=[0.0, 0.9])
for momentum, row in zip([0.0, 0.9], corners.names()):
    print(f"momentum {momentum}:  lr 0.02 -> {row[0]:10s}  lr 0.25 -> {row[1]}")
""", learntorch_only="OptimizerExplorer is one of learntorch's widgets")

ch.markdown(r"""
## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you which input went wrong, what was expected and what came back.

### Exercise 04.1 · A cross-entropy that survives ±1000

Write `stable_cross_entropy(logits, target)`: `logits` has shape `(N, C)`, `target` shape `(N,)`
with class indices (int64). Return the mean over the batch of $-\log p_{i, y_i}$ (a 0-d tensor,
like `F.cross_entropy`), computed with the log-sum-exp trick of section 2 so that logits like
±1000 give finite losses and finite gradients.

Build it from `max`, `exp`, `sum`, `log` and indexing: not from `F.cross_entropy`,
`F.log_softmax`, `F.nll_loss`, `logsumexp` or the loss modules (`nn.CrossEntropyLoss`, ...). The
check reads your function's code and watches what it calls to make sure. Autograd takes care of
the backward.
""")

ch.solution("04.1", points=3, hint=(
    "follow the formula of section 2 with m = each row's max (keepdim=True keeps the shapes "
    "lined up); then pick one entry per row, the target's; autograd does the backward"), source=r"""
def stable_cross_entropy(logits, target):
    # mean over the batch of -log softmax(logits)[i, target[i]], without overflow
    ### BEGIN SOLUTION
    shifted = logits - logits.max(dim=1, keepdim=True).values
    log_probs = shifted - torch.log(torch.exp(shifted).sum(dim=1, keepdim=True))
    picked = log_probs[torch.arange(logits.shape[0]), target]
    return -picked.mean()
    ### END SOLUTION
""")

ch.check("04.1", r"""
from course.checks import exercise, check_close, check_not_called, check_not_used


def compare_with_torch(logits, target, what):
    # the value and the gradient of stable_cross_entropy against F.cross_entropy's
    mine = logits.detach().clone().requires_grad_(True)
    reference = logits.detach().clone().requires_grad_(True)
    expected = F.cross_entropy(reference, target)
    expected.backward()
    got = stable_cross_entropy(mine, target)
    # atol 1e-4: float32 numbers near 1000 are 6e-5 apart, so a correct m + log(...) may round
    check_close(got, expected.detach(), name=f"stable_cross_entropy(logits, target), {what}",
                inputs={"logits": logits, "target": target}, atol=1e-4)
    got.backward()
    check_close(mine.grad, reference.grad, name=f"logits.grad after backward(), {what}",
                inputs={"logits": logits, "target": target}, atol=1e-5)


RULE = "build it from max, exp, sum, log and indexing, not from a ready-made loss or log-softmax"
READY_MADE = ["F.cross_entropy", "F.log_softmax", "F.nll_loss", "torch.log_softmax", "torch.logsumexp",
              "torch.Tensor.log_softmax", "torch.Tensor.logsumexp", "torch.nn.CrossEntropyLoss.forward",
              "torch.nn.NLLLoss.forward", "torch.nn.LogSoftmax.forward"]

with exercise("04.1"):
    check_not_used(stable_cross_entropy, READY_MADE + ["cross_entropy", "log_softmax", "nll_loss",
                                                       "CrossEntropyLoss", "NLLLoss", "LogSoftmax"], rule=RULE)
    logits, target = torch.randn(4, 3, dtype=torch.float64), torch.tensor([2, 0, 1, 1])
    check_not_called(stable_cross_entropy, (logits, target), READY_MADE, rule=RULE)

    compare_with_torch(torch.randn(5, 4), torch.tensor([0, 3, 1, 1, 2]), "small logits")
    compare_with_torch(torch.tensor([[1000.0, -1000.0, 0.0],
                                     [-1000.0, 1000.0, 500.0]]), torch.tensor([1, 2]),
                       "logits of ±1000 (the naive formula gives inf or nan)")
    compare_with_torch(torch.tensor([[-1000.0, -1000.0], [1000.0, 1000.0]]), torch.tensor([0, 1]),
                       "rows of very different sizes (a max over the whole batch instead of each row's "
                       "leaves row 0 at e^-2000 = 0)")
    compare_with_torch(torch.tensor([[3.0, -2000.0, 1.0]]), torch.tensor([1]),
                       "the target's logit 2000 below the largest (its probability rounds to 0: take "
                       "the log of a sum, never of a probability)")
""")

ch.hidden_check("04.1", r"""
with exercise("04.1"):
    compare_with_torch(torch.randn(1, 10), torch.tensor([7]), "a batch of one")
    compare_with_torch(torch.randn(64, 10) * 50, torch.randint(0, 10, (64,)), "64 samples, logits of size ~50")
    compare_with_torch(torch.tensor([[-5000.0, 0.0, -5000.0], [2.0, 2.0, 2.0]]), torch.tensor([0, 2]),
                       "a row at e^-5000, a row of equal logits")

    logits = torch.randn(4, 3, dtype=torch.float64)
    got = check_not_called(stable_cross_entropy, (logits, torch.tensor([2, 0, 1, 1])), READY_MADE, rule=RULE)
    check_close(got, F.cross_entropy(logits, torch.tensor([2, 0, 1, 1])), name="stable_cross_entropy on float64 logits",
                inputs={"logits": logits})
""")

ch.markdown(r"""
### Exercise 04.2 · One step of Adam

Write `adam_step(param, grad, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)`, one Adam update of
`param` from its gradient `grad`, following the formulas of section 3:

- `state` is a dict that the caller keeps between steps, empty before the first step. Keep in it
  what `torch.optim.Adam` keeps in `optimizer.state[p]`: `"step"` (the number of steps taken,
  counting this one), `"exp_avg"` ($m$) and `"exp_avg_sq"` ($v$), both starting as zeros of
  `param`'s shape.
- Update `param` **in place**: the caller's tensor must change, as an optimizer changes the model's
  parameters. `param` requires grad and autograd must not record the update, so do it inside
  `with torch.no_grad():` (`param` stays a leaf).
- Leave `grad` unchanged.
- Follow the formulas exactly, $\varepsilon$ included: it is added to $\sqrt{\hat v}$, outside the
  square root.

The check runs your function next to `torch.optim.Adam` for several steps, with PyTorch's defaults
and with other settings (a large `eps` among them, where its place shows), and compares the
parameters and the state after each one.
""")

ch.solution("04.2", points=3, hint=(
    "an empty state means this is the first step: fill it; then follow section 3's formulas in "
    "order; an in-place operation (-=) changes the caller's tensor"), source=r"""
def adam_step(param, grad, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    # one Adam update of `param` in place; `state` carries step, exp_avg and exp_avg_sq
    beta1, beta2 = betas
    ### BEGIN SOLUTION
    if not state:
        state["step"] = 0
        state["exp_avg"] = torch.zeros_like(param)
        state["exp_avg_sq"] = torch.zeros_like(param)
    state["step"] += 1
    t = state["step"]
    with torch.no_grad():
        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad * grad
        m_hat = state["exp_avg"] / (1 - beta1 ** t)
        v_hat = state["exp_avg_sq"] / (1 - beta2 ** t)
        param -= lr * m_hat / (v_hat.sqrt() + eps)
    ### END SOLUTION
""")

ch.check("04.2", r"""
from course.checks import exercise, check_close, check_equal


def looks_like_eps_inside(param, before, state, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    # True when param moved as it would with sqrt(v_hat + eps) in the denominator
    m_hat = state["exp_avg"] / (1 - betas[0] ** t)
    v_hat = state["exp_avg_sq"] / (1 - betas[1] ** t)
    return torch.allclose(param.detach(), before - lr * m_hat / (v_hat + eps).sqrt(), atol=1e-7)


def compare_with_adam(start, grads, what, **options):
    # adam_step and torch.optim.Adam from the same start with the same gradients, step by step
    mine = start.clone().requires_grad_(True)
    theirs = start.clone().requires_grad_(True)
    adam = torch.optim.Adam([theirs], **options)
    state = {}
    call = "adam_step(param, grad, state" + "".join(f", {k}={v}" for k, v in options.items()) + ")"
    for k, grad in enumerate(grads, start=1):
        grad_before, param_before = grad.clone(), mine.detach().clone()
        theirs.grad = grad.clone()
        adam.step()
        adam_step(mine, grad, state, **options)
        check_equal(grad, grad_before, name=f"{what}: grad after step {k} (adam_step must not change it)")
        hint = ""
        if torch.equal(mine.detach(), param_before):
            hint = " (param did not change: update the caller's tensor in place, param -= ...)"
        elif options.get("eps", 0) >= 1e-3 and looks_like_eps_inside(mine, param_before, state, k, **options):
            hint = " (eps inside the square root? the formula adds it to sqrt(v_hat))"
        check_close(mine, theirs, name=f"{what}: param after step {k} of {call}{hint}",
                    inputs={"grad": grad}, atol=1e-6)
        check_equal((mine.is_leaf, mine.grad_fn), (True, None),
                    name=f"{what}: (param.is_leaf, param.grad_fn) after step {k} (update it under torch.no_grad())")
        check_close(state["exp_avg"], adam.state[theirs]["exp_avg"], name=f'{what}: state["exp_avg"] after step {k}')
        check_close(state["exp_avg_sq"], adam.state[theirs]["exp_avg_sq"],
                    name=f'{what}: state["exp_avg_sq"] after step {k}')
    check_equal(int(state["step"]), len(grads), name=f'{what}: state["step"] after {len(grads)} steps')


with exercise("04.2"):
    torch.manual_seed(0)
    grads = [torch.randn(4) * scale for scale in (1.0, 0.1, 10.0, 1.0, 0.5)]
    compare_with_adam(torch.randn(4), grads, "5 steps", lr=0.1, betas=(0.8, 0.99), eps=1e-8)
    compare_with_adam(torch.randn(3, 2), [torch.randn(3, 2) for _ in range(3)], "PyTorch's defaults, a (3, 2) parameter")
    compare_with_adam(torch.randn(5), [torch.randn(5) * 1e-3 for _ in range(4)], "a large eps",
                      lr=0.01, betas=(0.9, 0.999), eps=0.1)
""")

ch.hidden_check("04.2", r"""
with exercise("04.2"):
    torch.manual_seed(1)
    compare_with_adam(torch.randn(2, 2, 2), [torch.randn(2, 2, 2) for _ in range(3)], "defaults, a (2, 2, 2) parameter")
    compare_with_adam(torch.randn(5), [torch.randn(5) * 1e-4 for _ in range(4)], "eps 0.5",
                      lr=0.02, betas=(0.5, 0.9), eps=0.5)
    compare_with_adam(torch.randn(3), [torch.tensor([0.0, 1.0, -2.0])] * 3, "a zero gradient entry", lr=0.5)

    # a real training loop: gradients from autograd on the bowl of section 3, 30 steps
    mine = torch.tensor([1.0, 1.0], requires_grad=True)
    theirs = torch.tensor([1.0, 1.0], requires_grad=True)
    adam, state = torch.optim.Adam([theirs], lr=0.05), {}
    for _ in range(30):
        mine.grad = None
        bowl(mine).backward()
        adam_step(mine, mine.grad, state, lr=0.05)
        adam.zero_grad()
        bowl(theirs).backward()
        adam.step()
    check_close(mine, theirs, name="param after 30 steps of a training loop on the bowl, lr=0.05", atol=1e-5)
    check_equal(mine.is_leaf, True, name="param is still a leaf after adam_step (update it under torch.no_grad())")
""")

ch.markdown(r"""
## What's next

You can now choose a loss, keep it finite, and say what each optimizer does with the gradients.
Next, [**05 · Data**](05_data.ipynb) feeds a model batches of real digits with `Dataset` and `DataLoader`, and
puts model, loss and optimizer together in a training loop.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
