"""Learner variants of chapter 13 (quantization): 13.1 quantize and dequantize, 13.2 a scale and
zero point for an asymmetric range.  See course/variants.py for the format."""
from course.variants import correct, mistake


def _pair(quantize_body, dequantize_body="    return scale * (q - zero_point).float()\n"):
    return ("def quantize(x, scale, zero_point, qmin, qmax):\n" + quantize_body +
            "\n\ndef dequantize(q, scale, zero_point):\n" + dequantize_body)


def _qparams(body):
    return ("EPS = 1.1920928955078125e-07\n\n\n"
            "def choose_qparams(min_val, max_val, qmin, qmax):\n" + body)


VARIANTS = {
    "13.1": [
        correct("clamp_ as a method, to(torch.int64), the dequantize as (q.float() - z) * s", _pair(
            "    codes = (x / scale).round() + zero_point\n"
            "    return codes.clamp(min=qmin, max=qmax).to(torch.int64)\n",
            "    return (q.float() - zero_point) * scale\n")),
        correct("the zero point added before rounding, as torch does", _pair(
            "    codes = torch.round(x / scale + zero_point)\n"
            "    codes = torch.where(codes < qmin, torch.full_like(codes, qmin), codes)\n"
            "    codes = torch.where(codes > qmax, torch.full_like(codes, qmax), codes)\n"
            "    return codes.long()\n",
            "    return ((q - zero_point) * scale).float()\n")),
        mistake("truncated instead of rounded (.long() cuts toward zero)", _pair(
            "    return torch.clamp(x / scale + zero_point, qmin, qmax).long()\n"),
            feedback=["inside the grid", "round to the nearest"]),
        mistake("floor instead of round", _pair(
            "    return torch.clamp(torch.floor(x / scale) + zero_point, qmin, qmax).long()\n"),
            feedback=["inside the grid", "round to the nearest"]),
        mistake("no clamp: values beyond the grid get codes int8 cannot hold", _pair(
            "    return (torch.round(x / scale) + zero_point).long()\n"),
            feedback=["beyond the grid", "clamp"]),
        mistake("the zero point subtracted instead of added", _pair(
            "    return torch.clamp(torch.round(x / scale) - zero_point, qmin, qmax).long()\n",
            "    return scale * (q + zero_point).float()\n"),
            feedback=["inside the grid", "add zero_point"]),
        mistake("dequantize forgets the zero point", _pair(
            "    return torch.clamp(torch.round(x / scale) + zero_point, qmin, qmax).long()\n",
            "    return scale * q.float()\n"),
            feedback=["dequantize", "scale * (q - zero_point)"]),
        mistake("codes left as floats", _pair(
            "    return torch.clamp(torch.round(x / scale) + zero_point, qmin, qmax)\n"),
            feedback=["int64", ".long()"]),
        mistake("dequantize returns int64 values (the scale multiplied after an integer cast)", _pair(
            "    return torch.clamp(torch.round(x / scale) + zero_point, qmin, qmax).long()\n",
            "    return (scale * (q - zero_point)).long()\n"),
            feedback=["dequantize", "float32"]),
        mistake("torch.quantize_per_tensor does the work", _pair(
            "    qmin_dtype = torch.qint8 if qmin < 0 else torch.quint8\n"
            "    return torch.quantize_per_tensor(x, scale, zero_point, qmin_dtype).int_repr().long()\n"),
            feedback=["quantize_per_tensor", "rules out"]),
    ],
    "13.2": [
        correct("torch tensors for the arithmetic, round() of a float, clamp written as two ifs", _qparams(
            "    low = torch.tensor(min(min_val, 0.0), dtype=torch.float64)\n"
            "    high = torch.tensor(max(max_val, 0.0), dtype=torch.float64)\n"
            "    scale = ((high - low) / (qmax - qmin)).item()\n"
            "    if scale == 0:\n"
            "        scale = EPS\n"
            "    zero_point = qmin - round(low.item() / scale)\n"
            "    if zero_point < qmin:\n"
            "        zero_point = qmin\n"
            "    if zero_point > qmax:\n"
            "        zero_point = qmax\n"
            "    return scale, int(zero_point)\n")),
        correct("the range extended with if statements; zero point from the top end", _qparams(
            "    if min_val > 0:\n"
            "        min_val = 0.0\n"
            "    if max_val < 0:\n"
            "        max_val = 0.0\n"
            "    scale = (max_val - min_val) / (qmax - qmin) or EPS\n"
            "    zero_point = qmin - round(min_val / scale)\n"
            "    return float(scale), max(qmin, min(qmax, int(zero_point)))\n")),
        mistake("the range not extended to include 0", _qparams(
            "    scale = max((max_val - min_val) / (qmax - qmin), EPS)\n"
            "    zero_point = qmin - round(min_val / scale)\n"
            "    return float(scale), int(min(max(zero_point, qmin), qmax))\n"),
            feedback=["include 0"]),
        mistake("256 steps instead of 255 (qmax - qmin + 1)", _qparams(
            "    min_val, max_val = min(min_val, 0.0), max(max_val, 0.0)\n"
            "    scale = max((max_val - min_val) / (qmax - qmin + 1), EPS)\n"
            "    zero_point = qmin - round(min_val / scale)\n"
            "    return float(scale), int(min(max(zero_point, qmin), qmax))\n"),
            feedback=["the scale of choose_qparams(-1.0, 3.0, 0, 255)", "(max - min) / (qmax - qmin)"]),
        mistake("the zero point's sign flipped (qmin + round(min / scale))", _qparams(
            "    min_val, max_val = min(min_val, 0.0), max(max_val, 0.0)\n"
            "    scale = max((max_val - min_val) / (qmax - qmin), EPS)\n"
            "    zero_point = qmin + round(min_val / scale)\n"
            "    return float(scale), int(min(max(zero_point, qmin), qmax))\n"),
            feedback=["the zero point of", "qmin - round(min_val / scale)"]),
        mistake("an empty range divides by zero (no epsilon)", _qparams(
            "    min_val, max_val = min(min_val, 0.0), max(max_val, 0.0)\n"
            "    scale = (max_val - min_val) / (qmax - qmin)\n"
            "    zero_point = qmin - round(min_val / scale)\n"
            "    return float(scale), int(min(max(zero_point, qmin), qmax))\n"),
            feedback=["every value was 0", "epsilon"]),
        mistake("the zero point returned as a float", _qparams(
            "    min_val, max_val = min(min_val, 0.0), max(max_val, 0.0)\n"
            "    scale = max((max_val - min_val) / (qmax - qmin), EPS)\n"
            "    return scale, float(qmin - round(min_val / scale))\n"),
            feedback=["a Python float and a Python int"]),
    ],
}
