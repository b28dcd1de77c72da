"""einsum: products and sums over named dimensions, written as an equation.

    einsum("ij,jk->ik", A, B)     matrix product      einsum("ii->", A)     trace
    einsum("bij,bjk->bik", A, B)  batched product     einsum("ii->i", A)    diagonal
    einsum("...ij->...ji", A)     transpose the last two dims, whatever comes before
    einsum("ij,jk,kl->il", A, B, C)                   any number of operands
    einsum("ij,jk", A, B)         no '->': the output is the letters used once, sorted

How it runs: the equation is first rewritten without '...' (each dim an ellipsis
covers gets a letter of its own), then the backend's einsum computes it.  Letters of size
1 broadcast against larger ones, as dims do in ``+``.

The gradient of each operand is itself an einsum: for out = einsum("ij,jk->ik", A, B),
dA = einsum("ik,jk->ij", dOut, B) -- swap the operand's subscripts with the output's.
Two more cases:
* letters only this operand had were summed away: the gradient is the same for every
  value of them, so it is broadcast back over them;
* a letter repeated within the operand (the "ii" of a trace) read only the diagonal:
  the gradient lives on that diagonal, zero elsewhere (``einsum("i,ij->ij", g, eye)``).
Since the gradients are einsums, gradients of gradients come for free.
"""
import string

import numpy as np

from .. import backends
from .._tensor import Tensor
from ..autograd.function import Function, autocast_inputs
from ._helpers import check_same_device, wrap

LETTERS = string.ascii_uppercase + string.ascii_lowercase  # torch's order: 'A' < 'Z' < 'a'


class Einsum(Function):
    """einsum of an equation in letters only (no '...'; ``einsum`` rewrites it)."""
    node_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, spec, *operands):
        ctx.spec = spec
        ctx.save_for_backward(*operands)
        return wrap(backends.current.einsum(spec, *[o._data for o in operands]))

    @staticmethod
    def backward(ctx, grad):
        operands = ctx.saved_tensors
        inputs, out = ctx.spec.split("->")
        terms = inputs.split(",")
        unused = [c for c in LETTERS if c not in ctx.spec]
        grads = [None]  # the equation string gets no gradient
        for i, term in enumerate(terms):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            others = [(t, o) for j, (t, o) in enumerate(zip(terms, operands)) if j != i]
            grads.append(_operand_grad(grad, out, term, operands[i], others, unused))
        return tuple(grads)


def _operand_grad(grad, out, term, operand, others, unused):
    """d(sum(grad * out))/d(operand) for the operand with subscripts ``term``."""
    letters = "".join(dict.fromkeys(term))  # each letter once, in order
    own_size = {c: s for c, s in zip(term, operand.shape)}
    available = set(out).union(*[set(t) for t, _ in others])
    kept = "".join(c for c in letters if c in available)
    g = einsum(",".join([out] + [t for t, _ in others]) + "->" + kept,
               grad, *[o for _, o in others])
    # letters only this operand had: size 1, then broadcast back to the operand's size
    # (so are size-1 letters that einsum broadcast; the engine sums the reverse case)
    sizes = iter(g.shape)
    g = g.reshape([next(sizes) if c in available else 1 for c in letters])
    g = g.expand([max(gs, own_size[c]) for gs, c in zip(g.shape, letters)])
    if len(letters) == len(term):
        return g
    # a repeated letter: put the gradient on the diagonal.  Each repeat gets a fresh
    # letter tied to the first by an identity matrix: g[i] -> g[i] * eye[i, i']
    from ..factories import eye
    fresh, deltas, full = iter(unused), [], ""
    for position, c in enumerate(term):
        if c in term[:position]:
            f = next(fresh)
            deltas.append((c + f, eye(own_size[c], dtype=g.dtype, device=g.device)))
            c = f
        full += c
    return einsum(",".join([letters] + [s for s, _ in deltas]) + "->" + full,
                  g, *[d for _, d in deltas])


# ---------------------------------------------------------------- parsing
def _split_ellipsis(term, where):
    """``term`` without its '...' and the position the ellipsis had (None if none)."""
    if "." not in term:
        return term, None
    start = term.find("...")
    rest = term[:start] + term[start + 3:]
    if start >= 0 and "..." in rest:
        already = "but an ellipsis (...)" if where == "output" else "for which an ellipsis"
        raise RuntimeError(f"einsum(): found '.' for {where} {already} was already found; use "
                           "'...' once per operand and once in the output")
    if start < 0 or "." in rest:
        raise RuntimeError(f"einsum(): found '.' for {where} that is not part of any ellipsis;"
                           " write exactly three dots")
    return rest, start


def _check_letters(equation, text, offset=0, punctuation=",."):
    for k, c in enumerate(text):
        if c not in LETTERS and c not in punctuation:
            raise RuntimeError(f"einsum(): invalid subscript given at index {k + offset} in the "
                               f"equation string {equation!r}, subscripts must be in [a-zA-Z]")


def _parse(equation, operands):
    """Rewrite ``equation`` in letters only, one term per operand and the output's.

    Each dim covered by an ellipsis gets a fresh letter; ellipses are aligned from
    the right, like broadcast shapes.  Returns (terms, output, ellipsis letters).
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    _check_letters(equation, lhs)
    _check_letters(equation, rhs, len(lhs) + 2, punctuation=".")  # one output: no ','
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(
            f"einsum(): {'fewer' if len(operands) < len(terms) else 'more'} operands were "
            f"provided than specified in the equation: {equation!r} names {len(terms)}, "
            f"{len(operands)} given")
    split = [_split_ellipsis(t, f"operand {i}") for i, t in enumerate(terms)]
    covered = []
    for i, ((letters, at), op) in enumerate(zip(split, operands)):
        if at is None and len(letters) != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(letters)}) does not match the number of dimensions "
                               f"({op.ndim}) for operand {i} (shape {list(op.shape)}, subscripts "
                               f"{terms[i]!r}) and no ellipsis was given")
        if at is not None and len(letters) > op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(letters)}) is more than the number of dimensions "
                               f"({op.ndim}) for operand {i} (shape {list(op.shape)})")
        covered.append(op.ndim - len(letters) if at is not None else 0)
    free = [c for c in LETTERS if c not in eq]
    if max(covered, default=0) > len(free):
        raise RuntimeError("einsum(): the ellipsis covers more dimensions than there are "
                           "unused letters (52 in all)")
    ellipsis = "".join(free[:max(covered, default=0)])
    out_terms = []
    for (letters, at), n in zip(split, covered):
        # an ellipsis over n dims takes the *last* n ellipsis letters (right-aligned)
        out_terms.append(letters if at is None else
                         letters[:at] + ellipsis[len(ellipsis) - n:] + letters[at:])
    if arrow:
        rest, at = _split_ellipsis(rhs, "output")
        for c in rest:
            if rest.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
            if c not in lhs:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
        # without '...' in the output, the dims the ellipses covered are summed
        output = rest if at is None else rest[:at] + ellipsis + rest[at:]
    else:  # implicit output: the ellipsis dims, then the letters used once, sorted
        used = "".join(t for t, _ in split)
        output = ellipsis + "".join(sorted(c for c in set(used) if used.count(c) == 1))
    return out_terms, output, ellipsis


def _check_sizes(terms, operands, ellipsis):
    """Each letter one size (size 1 broadcasts), and a repeated letter within one operand
    the same size in all its places (a diagonal needs a square)."""
    sizes = {}
    for i, (term, op) in enumerate(zip(terms, operands)):
        own = {}
        for c, s in zip(term, op.shape):
            if c in own and own[c] != s:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the "
                                   f"sizes don't match, {s} != {own[c]} (shape "
                                   f"{list(op.shape)}; a diagonal needs equal sizes)")
            own[c] = s
            seen = sizes.setdefault(c, s)
            if s != seen and 1 not in (s, seen):
                if c in ellipsis:
                    raise RuntimeError(
                        f"einsum(): dimension {[x for x in term if x in ellipsis].index(c)} "
                        f"covered by ellipsis in operand {i} has size {s} which does not "
                        f"broadcast with previously seen ellipsis with size {seen} for the "
                        f"respective dimension (shape {list(op.shape)})")
                raise RuntimeError(f"einsum(): subscript {c} has size {s} for operand {i} which "
                                   f"does not broadcast with previously seen size {seen}")
            sizes[c] = max(s, seen)


def _from_sublists(args):
    """torch's other form: einsum(op0, [0, 1], op1, [1, 2], [0, 2]) -> an equation string.
    Subscripts are ints in [0, 52) (0 is 'A', 26 is 'a') or Ellipsis."""
    def term(sublist):
        if not isinstance(sublist, (list, tuple)):
            raise TypeError(f"einsum(): expected a list of subscripts after each operand, got "
                            f"{type(sublist).__name__}: einsum(op0, [0, 1], op1, [1, 2], [0, 2])")
        out = ""
        for s in sublist:
            if s is Ellipsis:
                out += "..."
            elif isinstance(s, (int, np.integer)) and 0 <= s < 52:
                out += LETTERS[s]
            else:
                raise ValueError(f"einsum(): expected subscript to be within [0, 52) or "
                                 f"Ellipsis, but got {s!r}")
        return out
    output = args[-1] if len(args) % 2 else None  # an odd count ends with the output
    pairs = args[:-1] if len(args) % 2 else args
    operands, sublists = list(pairs[0::2]), list(pairs[1::2])
    equation = ",".join(term(s) for s in sublists)
    if output is not None:
        equation += "->" + term(output)
    return equation, operands


def _require_tensors(operands):
    for i, op in enumerate(operands):
        if not isinstance(op, Tensor):
            raise TypeError(f"einsum(): operand {i} must be Tensor, not {type(op).__name__}; "
                            "wrap it with torch.tensor(...)")


def einsum(equation=None, *operands):
    """torch.einsum(equation, *operands), or torch.einsum(op0, sublist0, op1, ..., [out])."""
    if equation is None:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(equation, str):
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    else:  # the sublist form: the "equation" is the first operand
        equation, operands = _from_sublists((equation,) + operands)
    _require_tensors(operands)
    terms, output, ellipsis = _parse(equation, operands)
    _check_sizes(terms, operands, ellipsis)
    check_same_device(*operands)
    operands = autocast_inputs(Einsum, *operands)
    dtypes = {op._dtype for op in operands}
    if len(dtypes) > 1:
        raise RuntimeError(f"einsum(): expected all operands to have the same dtype, but got "
                           f"{' and '.join(sorted(str(d) for d in dtypes))}; convert first, "
                           "e.g. b.to(a.dtype)")
    return Einsum.apply(",".join(terms) + "->" + output, *operands)
