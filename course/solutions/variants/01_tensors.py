"""Learner variants of chapter 01 (tensors): 01.1 where an element lives, 01.2 the shape of a
broadcast.  See course/variants.py for the format."""
from course.variants import correct, edited, mistake

# The instructor-like answer to 01.2; several mistakes below are this answer with one line wrong.
PAD_AND_WALK = """
def broadcast_shape(a, b):
    ndim = max(len(a), len(b))
    a = (1,) * (ndim - len(a)) + tuple(a)
    b = (1,) * (ndim - len(b)) + tuple(b)
    out = []
    for dim, (m, n) in enumerate(zip(a, b)):
        if m != n and 1 not in (m, n):
            raise RuntimeError(f"sizes {m} and {n} clash at dimension {dim}")
        out.append(n if m == 1 else m)
    return tuple(out)
"""

VARIANTS = {
    "01.1": [
        correct("a sum over zip", """
            def storage_index(index, stride, offset):
                return offset + sum(i * s for i, s in zip(index, stride))
        """),
        correct("a loop over positions", """
            def storage_index(index, stride, offset):
                cell = offset
                for dim in range(len(index)):
                    cell = cell + index[dim] * stride[dim]
                return int(cell)
        """),
        mistake("the offset left out", """
            def storage_index(index, stride, offset):
                return sum(i * s for i, s in zip(index, stride))
        """, feedback=["the offset left out", "base[1, :, 1:]"]),
        mistake("strides paired with the index backwards", """
            def storage_index(index, stride, offset):
                return offset + sum(i * s for i, s in zip(index, reversed(stride)))
        """, feedback=["storage_index((1, 2), (4, 1), 0)", "expected: int 6"]),
        mistake("a float returned (numpy's dot)", """
            import numpy as np

            def storage_index(index, stride, offset):
                return offset + np.dot(np.array(index, dtype=float), np.array(stride, dtype=float))
        """, feedback=["returns (an int)", "float"]),
    ],
    "01.2": [
        correct("pad with 1s, then walk both shapes", PAD_AND_WALK),
        correct("from the right with zip_longest, negative dimensions", """
            from itertools import zip_longest

            def broadcast_shape(a, b):
                result = []
                for k, (m, n) in enumerate(zip_longest(reversed(a), reversed(b), fillvalue=1)):
                    if m == 1:
                        result.append(n)
                    elif n == 1 or m == n:
                        result.append(m)
                    else:
                        raise RuntimeError(f"cannot broadcast {tuple(a)} and {tuple(b)}: size {m} "
                                           f"against size {n} in dimension {-(k + 1)}")
                return tuple(reversed(result))
        """),
        mistake("the larger size instead of rule 3: (1,) and (0,) give (1,)", edited(
            PAD_AND_WALK, ("out.append(n if m == 1 else m)", "out.append(max(m, n))")), feedback=["broadcast_shape((1,), (0,))", "rule 3", "even 0"]),
        mistake("a RuntimeError with an empty message", """
            def broadcast_shape(a, b):
                ndim = max(len(a), len(b))
                a = (1,) * (ndim - len(a)) + tuple(a)
                b = (1,) * (ndim - len(b)) + tuple(b)
                out = []
                for m, n in zip(a, b):
                    if m != n and 1 not in (m, n):
                        raise RuntimeError()
                    out.append(n if m == 1 else m)
                return tuple(out)
        """, feedback=["message of broadcast_shape", "leaves out", "the size of a that clashes",
                       "their dimension"]),
        mistake("a message with the shapes but not the dimension", """
            def broadcast_shape(a, b):
                ndim = max(len(a), len(b))
                pa = (1,) * (ndim - len(a)) + tuple(a)
                pb = (1,) * (ndim - len(b)) + tuple(b)
                if any(m != n and 1 not in (m, n) for m, n in zip(pa, pb)):
                    raise RuntimeError(f"shapes {a} and {b} do not broadcast")
                return tuple(n if m == 1 else m for m, n in zip(pa, pb))
        """, feedback=["leaves out their dimension"]),
        mistake("a list where a tuple is asked", edited(
            PAD_AND_WALK, ("return tuple(out)", "return out")), feedback=["returns a tuple", "it returned a list"]),
        mistake("torch.broadcast_shapes called", """
            def broadcast_shape(a, b):
                return tuple(torch.broadcast_shapes(a, b))
        """, feedback=["torch.broadcast_shapes", "rules out"]),
        mistake("numpy's broadcast_shapes called", """
            import numpy as np

            def broadcast_shape(a, b):
                try:
                    return np.broadcast_shapes(a, b)
                except ValueError as error:
                    raise RuntimeError(str(error))
        """, feedback=["np.broadcast_shapes", "without torch or numpy"]),
        mistake("tensors made to be added", """
            def broadcast_shape(a, b):
                return tuple((torch.zeros(a) + torch.zeros(b)).shape)
        """, feedback=["torch.zeros", "rules out"]),
        mistake("a ValueError instead of a RuntimeError", edited(
            PAD_AND_WALK, ("raise RuntimeError", "raise ValueError")), feedback=["wrong exception type", "ValueError"]),
        mistake("shapes aligned from the left", edited(
            PAD_AND_WALK, ("(1,) * (ndim - len(a)) + tuple(a)", "tuple(a) + (1,) * (ndim - len(a))"),
            ("(1,) * (ndim - len(b)) + tuple(b)", "tuple(b) + (1,) * (ndim - len(b))")), feedback=["broadcast_shape((3, 1), (4,))", "expected: tuple (3, 4)"]),
    ],
}
