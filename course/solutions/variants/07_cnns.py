"""Learner variants of chapter 07 (convolutional networks): 07.1 a convolution with loops,
07.2 a convolution as one matrix product.  See course/variants.py for the format."""
from course.variants import correct, mistake

_SIZE = """\
def conv_output_size(size, kernel, padding=0, stride=1, dilation=1):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


"""


def _loops(window_sum, start="i * stride", end_offset="kh", pad="F.pad(x, (padding,) * 4)",
           finish="    return out\n", size=_SIZE, bias="        out = out + bias[None, :, None, None]\n"):
    """conv2d_loops with one position at a time; ``window_sum`` turns ``window`` (N, C, kh, kw)
    into the (N, O) outputs of that position."""
    col_start = start.replace("i * ", "j * ") if start != "i" else "j"
    return (size +
            "def conv2d_loops(x, weight, bias=None, stride=1, padding=0):\n"
            "    N, C, H, W = x.shape\n"
            "    O, _, kh, kw = weight.shape\n"
            "    Ho, Wo = conv_output_size(H, kh, padding, stride), conv_output_size(W, kw, padding, stride)\n"
            f"    padded = {pad}\n"
            "    rows = []\n"
            "    for i in range(Ho):\n"
            "        row = []\n"
            "        for j in range(Wo):\n"
            f"            window = padded[:, :, {start}:{start} + {end_offset}, {col_start}:{col_start} + kw]\n"
            f"            row.append({window_sum})\n"
            "        rows.append(torch.stack(row, dim=-1))\n"
            "    out = torch.stack(rows, dim=-2)\n"
            "    if bias is not None:\n" + bias + finish)


_SUM = "(window[:, None] * weight[None]).sum(dim=(2, 3, 4))"


def _im2col(body):
    return ("def conv2d_im2col(x, weight, bias=None, stride=1, padding=0):\n"
            "    N, C, H, W = x.shape\n"
            "    O, _, kh, kw = weight.shape\n"
            "    Ho = (H + 2 * padding - kh) // stride + 1\n"
            "    Wo = (W + 2 * padding - kw) // stride + 1\n" + body +
            "    if bias is not None:\n"
            "        out = out + bias.reshape(1, O, 1, 1)\n"
            "    return out\n")


VARIANTS = {
    "07.1": [
        correct("einsum per position; the size with math.floor and a float division", _loops(
            'torch.einsum("nchw,ochw->no", window, weight)',
            size="import math\n\n\ndef conv_output_size(size, kernel, padding=0, stride=1, dilation=1):\n"
                 "    return math.floor((size + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1\n\n\n")),
        correct("a matrix product per position (window flattened), the padding built by torch.cat", _loops(
            "window.reshape(N, -1) @ weight.reshape(O, -1).T",
            pad="torch.cat([torch.zeros(N, C, padding, W + 2 * padding), torch.cat([torch.zeros(N, C, H, padding), x, "
                "torch.zeros(N, C, H, padding)], dim=3), torch.zeros(N, C, padding, W + 2 * padding)], dim=2)")),
        correct("output pixels written into a list per image-independent position, bias added per position",
                _loops(_SUM, bias="        out = out + bias.reshape(1, -1, 1, 1)\n")),
        mistake("the kernel flipped (a textbook convolution, not F.conv2d's)",
                _loops("(window[:, None] * weight.flip(2, 3)[None]).sum(dim=(2, 3, 4))"),
                feedback=["not flipped", "one image, one channel"]),
        mistake("the padding ignored (in the windows and in the sizes)", _loops(_SUM, pad="x").replace(
            "conv_output_size(H, kh, padding, stride), conv_output_size(W, kw, padding, stride)",
            "conv_output_size(H, kh, 0, stride), conv_output_size(W, kw, 0, stride)"),
                feedback=["padding=1", "shape of conv2d_loops"]),
        mistake("the window moved by one pixel whatever the stride", _loops(_SUM, start="i"),
                feedback=["stride=2", "window (i, j) starts at row i·stride"]),
        mistake("the bias left out", _loops(_SUM, bias="        pass\n"),
                feedback=["plus bias[o]"]),
        mistake("the size formula without its + 1", _loops(_SUM, size=_SIZE.replace(" // stride + 1", " // stride")),
                feedback=["conv_output_size"]),
        mistake("the size as a float (/ instead of //)", _loops(_SUM, size="""\
def conv_output_size(size, kernel, padding=0, stride=1, dilation=1):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1


"""), feedback=["got:      float 4.5", "the division rounds down"]),
        mistake("the result detached from the graph", _loops(_SUM, finish="    return out.detach()\n"),
                feedback=["requires_grad", "carry gradients"]),
        mistake("F.conv2d does the work", _SIZE + """\
def conv2d_loops(x, weight, bias=None, stride=1, padding=0):
    return F.conv2d(x, weight, bias, stride=stride, padding=padding)
""", feedback=["F.conv2d", "rules out"]),
    ],
    "07.2": [
        correct("windows as rows: (N, L, C·kh·kw) @ (C·kh·kw, O), then transposed", _im2col(
            "    windows = F.unfold(x, (kh, kw), padding=padding, stride=stride)\n"
            "    out = (windows.transpose(1, 2) @ weight.reshape(O, -1).T).transpose(1, 2).reshape(N, O, Ho, Wo)\n")),
        correct("einsum as the one product; the sizes from conv_output_size", _im2col(
            "    Ho, Wo = conv_output_size(H, kh, padding, stride), conv_output_size(W, kw, padding, stride)\n"
            "    windows = F.unfold(x, kernel_size=(kh, kw), padding=padding, stride=stride)\n"
            '    out = torch.einsum("ok,nkl->nol", weight.flatten(1), windows).reshape(N, O, Ho, Wo)\n')),
        mistake("F.conv2d does the work", _im2col(
            "    out = F.conv2d(x, weight, None, stride=stride, padding=padding)\n"),
            feedback=["F.conv2d", "rules out"]),
        mistake("one product per image, in a loop", _im2col(
            "    out = torch.stack([(weight.reshape(O, -1) @ F.unfold(x[n:n + 1], (kh, kw), padding=padding, "
            "stride=stride))[0] for n in range(N)]).reshape(N, O, Ho, Wo)\n"),
            feedback=["loops in conv2d_im2col"]),
        mistake("the positions reshaped before the output channels", _im2col(
            "    windows = F.unfold(x, (kh, kw), padding=padding, stride=stride)\n"
            "    out = (weight.reshape(O, -1) @ windows).reshape(N, Ho, Wo, O).permute(0, 3, 1, 2)\n"),
            feedback=["the output channels before the positions"]),
        mistake("stride and padding not given to F.unfold (nor to the sizes)", _im2col(
            "    Ho, Wo = H - kh + 1, W - kw + 1\n"
            "    windows = F.unfold(x, (kh, kw))\n"
            "    out = (weight.reshape(O, -1) @ windows).reshape(N, O, Ho, Wo)\n"),
            feedback=["stride=2, padding=1", "shape of conv2d_im2col"]),
    ],
}
