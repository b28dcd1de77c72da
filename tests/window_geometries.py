"""A hypothesis strategy for 2-D window geometries: the windows of convolution and pooling.

Shared by the specs of im2col/col2im (``nn/test_conv_im2col.py``) and of the
Numba col2im kernel (``backends/test_backend_col2im_kernel.py``): both need
every kind of window -- any stride and dilation, padding before and after the
image, windows hanging over the edge -- over an image they fit.
"""
from hypothesis import strategies as st

from learntorch.backends.geometry import Geometry, output_size


@st.composite
def window_geometries(draw, max_kernel=3, max_after=2, max_extra=4, max_batch=2):
    """(Geometry, (N, C)): a random geometry with an image it fits, and a batch of planes.

    The image is at least as large as one dilated window minus its padding, plus up
    to ``max_extra`` pixels; ``max_*`` widen the search where a test wants more.
    """
    kernel = (draw(st.integers(1, max_kernel)), draw(st.integers(1, max_kernel)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    before = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    after = (draw(st.integers(0, max_after)), draw(st.integers(0, max_after)))
    size = tuple(max(1, d * (k - 1) + 1 - b - a) + draw(st.integers(0, max_extra))
                 for k, d, b, a in zip(kernel, dilation, before, after))
    out = tuple(output_size(n, k, s, d, b, a) for n, k, s, d, b, a
                in zip(size, kernel, stride, dilation, before, after))
    planes = (draw(st.integers(1, max_batch)), draw(st.integers(1, 3)))
    return Geometry(size, kernel, stride, dilation, before, out), planes
