"""``torch.rot90``: a quarter turn of the plane of two dimensions, made of ops that already exist.

An image augmentation a CNN program calls (``torch.rot90(images, 1, [2, 3])``).  A turn
by 90° is a mirror followed by a transpose: turning counter-clockwise (from ``dims[0]``
towards ``dims[1]``) puts column j of row i at row (W - 1 - j), column i -- ``flip`` the
``dims[1]`` axis, then swap the two.  Its backward needs no rule of its own: ``flip`` and
``transpose`` already have theirs.  As in torch, the result of k = 1 or 3 is the flipped
copy seen through a transpose (not contiguous), k = 0 a contiguous copy.
"""
from . import shape


def rot90(input, k=1, dims=(0, 1)):
    """``input`` turned ``k`` quarter turns in the plane of ``dims``, from ``dims[0]`` towards
    ``dims[1]`` (counter-clockwise on an image shown row 0 at the top); negative ``k`` turns
    the other way.  As ``torch.rot90``.

    >>> import learntorch as torch
    >>> torch.rot90(torch.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    first, second = (input._wrap_dim(d) for d in dims)      # IndexError out of range, as torch
    if first == second:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and "
                           f"dim1 = {dims[1]}")
    k = k % 4
    if k == 1:
        return shape.transpose(shape.flip(input, [second]), first, second)
    if k == 2:
        return shape.flip(input, [first, second])
    if k == 3:
        return shape.transpose(shape.flip(input, [first]), first, second)
    # no turn: a contiguous copy (torch's clone(memory_format=torch.contiguous_format))
    return shape.contiguous(input) if not input.is_contiguous() else shape.clone(input)
