"""Learner variants of chapter 10 (mixed precision): 10.1 predict autocast's dtypes, 10.2 the loss
scale's update rule.  See course/variants.py for the format."""
from course.variants import correct, mistake


# the last rules of a right answer to 10.1, shared by the mistakes that get the others wrong
_CAT = ("    if op == 'cat':\n"
        "        return torch.float32 if torch.float32 in dtypes else torch.bfloat16\n")
_PROMOTE = ("    result = dtypes[0]\n"
            "    for d in dtypes[1:]:\n"
            "        result = torch.promote_types(result, d)\n"
            "    return result\n")


def _predict(body):
    return "def predict_dtype(op, dtypes):\n" + body


def _update(body):
    return ("def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,\n"
            "                 growth_interval=2000):\n" + body)


VARIANTS = {
    "10.1": [
        correct("a table of policies, functools.reduce over promote_types", _predict(
            "    import functools\n"
            "    policy = {'matmul': 'lower', 'linear': 'lower', 'mse_loss': 'fp32',\n"
            "              'cross_entropy': 'fp32', 'prod': 'fp32', 'cat': 'widest'}.get(op)\n"
            "    if policy == 'lower':\n"
            "        return torch.bfloat16\n"
            "    if policy == 'fp32':\n"
            "        return torch.float32\n"
            "    if policy == 'widest':\n"
            "        return torch.float32 if any(d == torch.float32 for d in dtypes) else torch.bfloat16\n"
            "    return functools.reduce(torch.promote_types, dtypes)\n")),
        correct("promotion written as a set of the input dtypes", _predict(
            "    if op in {'matmul', 'linear'}:\n"
            "        return torch.bfloat16\n"
            "    if op in {'mse_loss', 'cross_entropy', 'prod'}:\n"
            "        return torch.float32\n"
            "    kinds = set(dtypes)\n"
            "    if op == 'cat':\n"
            "        return torch.float32 if torch.float32 in kinds else torch.bfloat16\n"
            "    if len(kinds) == 1:\n"
            "        return dtypes[0]\n"
            "    return torch.float32  # two different floating dtypes promote to float32 here\n")),
        mistake("everything inside autocast is bfloat16", _predict(
            "    return torch.bfloat16\n"),
            feedback=["mse_loss", "float32 list"]),
        mistake("the losses in bfloat16 too (only relu & co. follow their inputs)", _predict(
            "    if op in ('matmul', 'linear', 'mse_loss', 'cross_entropy', 'prod'):\n"
            "        return torch.bfloat16\n"
            + _CAT + _PROMOTE),
            feedback=["mse_loss", "float32 list"]),
        mistake("ops on no list made bfloat16 as well", _predict(
            "    if op in ('mse_loss', 'cross_entropy', 'prod'):\n"
            "        return torch.float32\n"
            + _CAT + "    return torch.bfloat16\n"),
            feedback=["relu", "inputs' dtype"]),
        mistake("softmax and sum in float32 (the GPU's list, not the CPU's)", _predict(
            "    if op in ('matmul', 'linear'):\n"
            "        return torch.bfloat16\n"
            "    if op in ('mse_loss', 'cross_entropy', 'prod', 'softmax', 'sum'):\n"
            "        return torch.float32\n"
            + _CAT + _PROMOTE),
            feedback=["softmax", "only on a GPU"]),
        mistake("cat always in bfloat16", _predict(
            "    if op in ('matmul', 'linear', 'cat'):\n"
            "        return torch.bfloat16\n"
            "    if op in ('mse_loss', 'cross_entropy', 'prod'):\n"
            "        return torch.float32\n"
            + _PROMOTE),
            feedback=["cat", "widest input"]),
        mistake("two inputs: the first input's dtype wins (no promotion)", _predict(
            "    if op in ('matmul', 'linear'):\n"
            "        return torch.bfloat16\n"
            "    if op in ('mse_loss', 'cross_entropy', 'prod'):\n"
            "        return torch.float32\n"
            + _CAT + "    return dtypes[0]\n"),
            feedback=["add", "promote"]),
        mistake("the dtype's name returned instead of the dtype", _predict(
            "    if op in ('matmul', 'linear'):\n"
            "        return 'bfloat16'\n"
            "    if op in ('mse_loss', 'cross_entropy', 'prod'):\n"
            "        return 'float32'\n"
            "    if op == 'cat':\n"
            "        return 'float32' if torch.float32 in dtypes else 'bfloat16'\n"
            "    return str(dtypes[0]).split('.')[-1]\n"),
            feedback=["a torch dtype"]),
        mistake("runs the operation under autocast instead of predicting", _predict(
            "    xs = [torch.ones(2, 2).to(d) for d in dtypes]\n"
            "    with torch.autocast('cpu'):\n"
            "        if op == 'matmul':\n"
            "            return (xs[0] @ xs[1]).dtype\n"
            "        return xs[0].dtype\n"),
            feedback=["autocast", "rules out"]),
    ],
    "10.2": [
        correct("the count kept separately, the tuple built at the end", _update(
            "    if found_inf:\n"
            "        new_scale, new_tracker, taken = scale * backoff_factor, 0, False\n"
            "    else:\n"
            "        taken = True\n"
            "        new_tracker = growth_tracker + 1\n"
            "        new_scale = scale\n"
            "        if new_tracker >= growth_interval:\n"
            "            new_scale, new_tracker = scale * growth_factor, 0\n"
            "    return (new_scale, new_tracker, taken)\n")),
        correct("modular arithmetic for the count", _update(
            "    if found_inf:\n"
            "        return scale * backoff_factor, 0, False\n"
            "    count = (growth_tracker + 1) % growth_interval\n"
            "    return (scale * growth_factor if count == 0 else scale), count, True\n")),
        mistake("grows on every good step", _update(
            "    if found_inf:\n"
            "        return scale * backoff_factor, 0, False\n"
            "    return scale * growth_factor, growth_tracker + 1, True\n"),
            feedback=["a good step", "the scale stays the same"]),
        mistake("the count of good steps not reset after a skipped step", _update(
            "    if found_inf:\n"
            "        return scale * backoff_factor, growth_tracker, False\n"
            "    growth_tracker += 1\n"
            "    if growth_tracker == growth_interval:\n"
            "        return scale * growth_factor, 0, True\n"
            "    return scale, growth_tracker, True\n"),
            feedback=["an inf or nan", "goes back to 0"]),
        mistake("backs off but takes the step anyway", _update(
            "    if found_inf:\n"
            "        return scale * backoff_factor, 0, True\n"
            "    growth_tracker += 1\n"
            "    if growth_tracker == growth_interval:\n"
            "        return scale * growth_factor, 0, True\n"
            "    return scale, growth_tracker, True\n"),
            feedback=["an inf or nan", "skipped"]),
        mistake("the count not reset after growing", _update(
            "    if found_inf:\n"
            "        return scale * backoff_factor, 0, False\n"
            "    growth_tracker += 1\n"
            "    if growth_tracker == growth_interval:\n"
            "        return scale * growth_factor, growth_tracker, True\n"
            "    return scale, growth_tracker, True\n"),
            feedback=["in a row: the scale grows", "goes back to 0"]),
        mistake("grows one step late (compares the count before counting this step)", _update(
            "    if found_inf:\n"
            "        return scale * backoff_factor, 0, False\n"
            "    if growth_tracker == growth_interval:\n"
            "        return scale * growth_factor, 0, True\n"
            "    return scale, growth_tracker + 1, True\n"),
            feedback=["in a row: the scale grows"]),
        mistake("divides by the backoff factor (the scale grows after an overflow)", _update(
            "    if found_inf:\n"
            "        return scale / backoff_factor, 0, False\n"
            "    growth_tracker += 1\n"
            "    if growth_tracker == growth_interval:\n"
            "        return scale * growth_factor, 0, True\n"
            "    return scale, growth_tracker, True\n"),
            feedback=["an inf or nan", "scale * backoff_factor"]),
        mistake("returns only the new scale", _update(
            "    if found_inf:\n"
            "        return scale * backoff_factor\n"
            "    return scale\n"),
            feedback=["a tuple of three"]),
    ],
}
