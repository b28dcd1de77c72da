"""``np.einsum`` on the GPU, lowered to views, sums and the batched matmul kernel.

No new kernel: every einsum is a chain of steps the backend already has.

1. *Repeated letters* in one operand ("ii" of a trace) read a diagonal: that is
   a view whose stride is the sum of the two dims' strides.
2. *Letters only one operand has*, and the output lacks, are summed away first
   (``reduction.py``).
3. Operands are then contracted two at a time, left to right.  For a pair A, B
   each letter is one of: *batch* (in both, kept), *contracted* (in both, summed
   over), *left* (only A, kept) or *right* (only B, kept).  A is transposed to
   (batch, left, contracted) and reshaped to (nb, nl, nk), B to (batch,
   contracted, right) as (nb, nk, nr); one batched matmul gives (nb, nl, nr),
   which is reshaped back to one dim per letter.  A letter is kept if the
   output or a later operand still needs it.
4. The result is transposed into the output's letter order.

A letter of size 1 in one operand broadcasts against the other's size (as
``+`` does): the size-1 dim becomes a stride-0 view before the reshape.
"""
import numpy as np

from .matmul import matmul


def einsum(spec, *operands, optimize=False, **kw):
    """``np.einsum(spec, *operands)`` for an explicit spec of letters ("ij,jk->ik")."""
    if not isinstance(spec, str) or "->" not in spec or "." in spec:
        raise NotImplementedError(
            f"np.einsum on cuda arrays takes an explicit equation of letters "
            f"('ij,jk->ik'), not {spec!r}: learntorch's einsum writes it so")
    inputs, output = spec.replace(" ", "").split("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum {spec!r} names {len(terms)} operands but got {len(operands)}")
    sizes = {}
    for term, a in zip(terms, operands):
        for c, s in zip(term, a.shape):
            if s != 1:
                sizes[c] = s
            sizes.setdefault(c, s)
    pairs = [_diagonal(a, term) for term, a in zip(terms, operands)]
    # sum away what no other operand and not the output needs
    pairs = [_sum_private(a, term, output + "".join(t for j, (_, t) in enumerate(pairs)
                                                      if j != i))
             for i, (a, term) in enumerate(pairs)]
    a, term = pairs[0]
    for i in range(1, len(pairs)):
        later = output + "".join(t for _, t in pairs[i + 1:])
        a, term = _contract(a, term, *pairs[i], later, sizes)
    a, term = _sum_private(a, term, output)
    return a.transpose([term.index(c) for c in output]).copy() if output else a.copy()


def _diagonal(a, term):
    """``a`` with each repeated letter's dims merged into one diagonal view; the new term."""
    letters, shape, strides = "", [], []
    for c, size, stride in zip(term, a.shape, a._strides):
        if c in letters:  # a repeat: walking the diagonal steps along both dims at once
            strides[letters.index(c)] += stride
        else:
            letters += c
            shape.append(size)
            strides.append(stride)
    return a.as_strided(shape, strides) if letters != term else a, letters


def _sum_private(a, term, needed):
    """Sum the dims whose letters are not in ``needed``."""
    axes = tuple(d for d, c in enumerate(term) if c not in needed)
    if not axes:
        return a, term
    return np.sum(a, axis=axes), "".join(c for c in term if c in needed)


def _contract(a, ta, b, tb, needed, sizes):
    """The pairwise contraction of (a, ta) and (b, tb) into one dim per letter still ``needed``."""
    batch = [c for c in ta if c in tb and c in needed]
    summed = [c for c in ta if c in tb and c not in needed]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]

    def as_3d(x, term, groups):
        order = [term.index(c) for group in groups for c in group]
        full = [sizes[c] for group in groups for c in group]
        x = x.transpose(order).broadcast_to(full)  # size-1 letters broadcast
        return x.reshape([int(np.prod([sizes[c] for c in g], dtype=np.int64)) for g in groups])

    product = matmul(as_3d(a, ta, (batch, left, summed)), as_3d(b, tb, (batch, summed, right)))
    letters = batch + left + right
    return product.reshape([sizes[c] for c in letters]), "".join(letters)
