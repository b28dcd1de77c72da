"""Learner variants of chapter 04 (losses and optimizers): 04.1 a cross-entropy that survives
±1000, 04.2 one step of Adam.  See course/variants.py for the format."""
from course.variants import correct, mistake


def _adam(update, setup="", no_grad=True):
    """adam_step with the usual bookkeeping and ``update`` (indented 8) as its last lines."""
    body = update if not no_grad else "    with torch.no_grad():\n" + update
    return ("def adam_step(param, grad, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):\n"
            "    beta1, beta2 = betas\n"
            "    if not state:\n"
            "        state['step'] = 0\n"
            "        state['exp_avg'] = torch.zeros_like(param)\n"
            "        state['exp_avg_sq'] = torch.zeros_like(param)\n"
            + setup +
            "    state['step'] += 1\n"
            "    t = state['step']\n" + body)


_MOMENTS = """\
        state['exp_avg'] = beta1 * state['exp_avg'] + (1 - beta1) * grad
        state['exp_avg_sq'] = beta2 * state['exp_avg_sq'] + (1 - beta2) * grad * grad
        m_hat = state['exp_avg'] / (1 - beta1 ** t)
        v_hat = state['exp_avg_sq'] / (1 - beta2 ** t)
"""

VARIANTS = {
    "04.1": [
        correct("gather for the targets, amax for each row", """
            def stable_cross_entropy(logits, target):
                m = logits.amax(dim=1, keepdim=True)
                log_sum = torch.log(torch.exp(logits - m).sum(dim=1, keepdim=True)) + m
                picked = logits.gather(1, target.unsqueeze(1))
                return (log_sum - picked).mean()
        """),
        correct("one row at a time, with Python max of each row", """
            def stable_cross_entropy(logits, target):
                losses = []
                for row, label in zip(logits, target):
                    m = row.max()
                    losses.append(m + (row - m).exp().sum().log() - row[label])
                return torch.stack(losses).mean()
        """),
        mistake("F.cross_entropy returned", """
            def stable_cross_entropy(logits, target):
                return F.cross_entropy(logits, target)
        """, feedback=["F.cross_entropy", "rules out"]),
        mistake("logsumexp", """
            def stable_cross_entropy(logits, target):
                log_probs = logits - logits.logsumexp(dim=1, keepdim=True)
                return -log_probs[torch.arange(len(target)), target].mean()
        """, feedback=["logits.logsumexp", "rules out"]),
        mistake("F.log_softmax reached under another name", """
            def stable_cross_entropy(logits, target):
                lsm = getattr(F, "log" + "_softmax")
                return -lsm(logits, dim=1)[torch.arange(len(target)), target].mean()
        """, feedback=["called F.log_softmax", "watched the calls"]),
        mistake("a max over the whole batch instead of each row's", """
            def stable_cross_entropy(logits, target):
                m = logits.max()
                log_probs = logits - m - torch.log(torch.exp(logits - m).sum(dim=1, keepdim=True))
                return -log_probs[torch.arange(len(target)), target].mean()
        """, feedback=["rows of very different sizes", "a max over the whole batch"]),
        mistake("the naive log of softmax", """
            def stable_cross_entropy(logits, target):
                probs = torch.exp(logits) / torch.exp(logits).sum(dim=1, keepdim=True)
                return -torch.log(probs[torch.arange(len(target)), target]).mean()
        """, feedback=["logits of ±1000", "nan"]),
        mistake("the log of a stable softmax: probabilities that round to 0", """
            def stable_cross_entropy(logits, target):
                m = logits.max(dim=1, keepdim=True).values
                e = torch.exp(logits - m)
                probs = e / e.sum(dim=1, keepdim=True)
                return -torch.log(probs[torch.arange(len(target)), target]).mean()
        """, feedback=["logits of ±1000", "got:      learntorch Tensor, shape (), float32: inf"]),
        mistake("a sum over the batch instead of the mean", """
            def stable_cross_entropy(logits, target):
                m = logits.max(dim=1, keepdim=True).values
                log_probs = logits - m - torch.log(torch.exp(logits - m).sum(dim=1, keepdim=True))
                return -log_probs[torch.arange(len(target)), target].sum()
        """, feedback=["small logits", "wrong values"]),
    ],
    "04.2": [
        correct("in-place moment updates (mul_, add_, addcmul_, addcdiv_)", """
            def adam_step(param, grad, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
                beta1, beta2 = betas
                if len(state) == 0:
                    state.update(step=0, exp_avg=torch.zeros_like(param), exp_avg_sq=torch.zeros_like(param))
                state["step"] += 1
                with torch.no_grad():
                    state["exp_avg"].mul_(beta1).add_(grad, alpha=1 - beta1)
                    state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    bias1 = 1 - beta1 ** state["step"]
                    bias2 = 1 - beta2 ** state["step"]
                    denom = (state["exp_avg_sq"] / bias2).sqrt() + eps
                    param.addcdiv_(state["exp_avg"], denom, value=-lr / bias1)
        """),
        correct("the bias corrections folded into the step size; param.sub_", _adam(
            "        state['exp_avg'] = beta1 * state['exp_avg'] + (1 - beta1) * grad\n"
            "        state['exp_avg_sq'] = beta2 * state['exp_avg_sq'] + (1 - beta2) * grad ** 2\n"
            "        step_size = lr / (1 - beta1 ** t)\n"
            "        denom = state['exp_avg_sq'].sqrt() / (1 - beta2 ** t) ** 0.5 + eps\n"
            "        param.sub_(step_size * state['exp_avg'] / denom)\n")),
        mistake("eps inside the square root", _adam(_MOMENTS +
            "        param -= lr * m_hat / (v_hat + eps).sqrt()\n"),
            feedback=["a large eps", "eps inside the square root?"]),
        mistake("no bias correction", _adam(
            "        state['exp_avg'] = beta1 * state['exp_avg'] + (1 - beta1) * grad\n"
            "        state['exp_avg_sq'] = beta2 * state['exp_avg_sq'] + (1 - beta2) * grad * grad\n"
            "        param -= lr * state['exp_avg'] / (state['exp_avg_sq'].sqrt() + eps)\n"),
            feedback=["param after step 1", "wrong values"]),
        mistake("param rebound instead of changed in place", _adam(_MOMENTS +
            "        param = param - lr * m_hat / (v_hat.sqrt() + eps)\n"),
            feedback=["param did not change", "in place"]),
        mistake("the update outside torch.no_grad()", _adam(
            _MOMENTS.replace("        ", "    ") +
            "    param -= lr * m_hat / (v_hat.sqrt() + eps)\n", no_grad=False),
            raises="RuntimeError", feedback=["leaf", "in-place"]),
        mistake("state['step'] never counted up: t stays 1", """
            def adam_step(param, grad, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
                beta1, beta2 = betas
                if not state:
                    state["step"] = 1
                    state["exp_avg"] = torch.zeros_like(param)
                    state["exp_avg_sq"] = torch.zeros_like(param)
                t = state["step"]
                with torch.no_grad():
                    state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
                    state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad * grad
                    m_hat = state["exp_avg"] / (1 - beta1 ** t)
                    v_hat = state["exp_avg_sq"] / (1 - beta2 ** t)
                    param -= lr * m_hat / (v_hat.sqrt() + eps)
        """, feedback=["param after step 2", "wrong values"]),
        mistake("grad squared in place for the second moment", _adam(
            "        state['exp_avg'] = beta1 * state['exp_avg'] + (1 - beta1) * grad\n"
            "        grad.mul_(grad)\n"
            "        state['exp_avg_sq'] = beta2 * state['exp_avg_sq'] + (1 - beta2) * grad\n"
            "        m_hat = state['exp_avg'] / (1 - beta1 ** t)\n"
            "        v_hat = state['exp_avg_sq'] / (1 - beta2 ** t)\n"
            "        param -= lr * m_hat / (v_hat.sqrt() + eps)\n"),
            feedback=["grad after step 1", "must not change it"]),
    ],
}
