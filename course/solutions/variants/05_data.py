"""Learner variants of chapter 05 (data): 05.1 a Dataset for the digits, 05.2 a random shift,
repeatable.  See course/variants.py for the format."""
from course.variants import correct, mistake


def _dataset(init, getitem):
    return ("class DigitsDataset(Dataset):\n"
            "    def __init__(self, transform=None):\n"
            "        pixels, labels = load_digits(raw=True)\n"
            "        self.transform = transform\n" + init +
            "\n    def __len__(self):\n        return len(self.labels)\n\n"
            "    def __getitem__(self, index):\n" + getitem)


_KEEP = ("        self.images = pixels.float().div(16).unsqueeze(1)\n"
         "        self.labels = labels\n")

_SHIFT = """
class RandomShift:
    def __init__(self, max_shift, generator=None):
        self.max_shift = max_shift
        self.generator = generator

    def __call__(self, image):
{body}
"""

VARIANTS = {
    "05.1": [
        correct("converted in __getitem__ every time (allowed, only slower)", """
            class DigitsDataset(Dataset):
                def __init__(self, transform=None):
                    self.pixels, self.labels = load_digits(raw=True)
                    self.transform = transform

                def __len__(self):
                    return self.pixels.shape[0]

                def __getitem__(self, index):
                    image = self.pixels[index].to(torch.float32).unsqueeze(0) / 16.0
                    if self.transform:
                        image = self.transform(image)
                    return image, self.labels[index].item()
        """),
        correct("a list of images made once; the transform gets a clone", _dataset(
            "        self.images = [(p.float() / 16).reshape(1, 8, 8) for p in pixels]\n"
            "        self.labels = labels.tolist()\n",
            "        image = self.images[index].clone()\n"
            "        return (image if self.transform is None else self.transform(image)), self.labels[index]\n")),
        mistake("the label returned as a tensor", _dataset(_KEEP,
            "        image = self.images[index].clone()\n"
            "        if self.transform is not None:\n"
            "            image = self.transform(image)\n"
            "        return image, self.labels[index]\n"), feedback=["label (a Python int)", "Tensor"]),
        mistake("pixel counts not scaled to [0, 1]", _dataset(
            "        self.images = pixels.float().unsqueeze(1)\n        self.labels = labels\n",
            "        image = self.images[index].clone()\n"
            "        return (self.transform(image) if self.transform else image), int(self.labels[index])\n"),
            feedback=["(pixel counts / 16)", "wrong values"]),
        mistake("no channel dimension: images of shape (8, 8)", _dataset(
            "        self.images = pixels.float() / 16\n        self.labels = labels\n",
            "        image = self.images[index].clone()\n"
            "        return (self.transform(image) if self.transform else image), int(self.labels[index])\n"),
            feedback=["DigitsDataset()[0] image", "wrong shape"]),
        mistake("the stored image handed to the transform: an in-place transform edits the data", _dataset(_KEEP,
            "        image = self.images[index]\n"
            "        if self.transform is not None:\n"
            "            image = self.transform(image)\n"
            "        return image, int(self.labels[index])\n"),
            feedback=["image.mul_(2)", "call 2", "an image of its own"]),
        mistake("the transform ignored", _dataset(_KEEP,
            "        return self.images[index].clone(), int(self.labels[index])\n"),
            feedback=["transform=lambda image: image * 2", "wrong values"]),
    ],
    "05.2": [
        correct("two draws, a slice for each side", _SHIFT.format(body="""\
        m = self.max_shift
        dy = int(torch.randint(-m, m + 1, (1,), generator=self.generator))
        dx = int(torch.randint(-m, m + 1, (1,), generator=self.generator))
        _, h, w = image.shape
        out = image.new_zeros(image.shape)
        rows_to, rows_from = slice(max(dy, 0), h + min(dy, 0)), slice(max(-dy, 0), h + min(-dy, 0))
        cols_to, cols_from = slice(max(dx, 0), w + min(dx, 0)), slice(max(-dx, 0), w + min(-dx, 0))
        out[:, rows_to, cols_to] = image[:, rows_from, cols_from]
        return out""")),
        correct("F.pad with zeros, then a crop", _SHIFT.format(body="""\
        m = self.max_shift
        dy, dx = torch.randint(-m, m + 1, (2,), generator=self.generator).tolist()
        _, h, w = image.shape
        padded = F.pad(image, (m, m, m, m))           # zeros all around
        return padded[:, m - dy:m - dy + h, m - dx:m - dx + w].clone()""")),
        mistake("indices taken modulo the size: the picture wraps around", _SHIFT.format(body="""\
        m = self.max_shift
        dy, dx = torch.randint(-m, m + 1, (2,), generator=self.generator).tolist()
        _, h, w = image.shape
        rows, cols = (torch.arange(h) - dy) % h, (torch.arange(w) - dx) % w
        return image[:, rows][:, :, cols]"""),
            feedback=["zeros filling the gap"]),
        mistake("Python's random module: no generator, no torch.manual_seed", "import random\n" + _SHIFT.format(body="""\
        m = self.max_shift
        dy, dx = random.randint(-m, m), random.randint(-m, m)
        _, h, w = image.shape
        out = torch.zeros_like(image)
        out[:, max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)] = \\
            image[:, max(-dy, 0):h + min(-dy, 0), max(-dx, 0):w + min(-dx, 0)]
        return out"""), feedback=["generator seeded 7", "the same shifts whatever torch.manual_seed says"]),
        mistake("the generator ignored: the global random numbers", _SHIFT.format(body="""\
        m = self.max_shift
        dy, dx = torch.randint(-m, m + 1, (2,)).tolist()
        _, h, w = image.shape
        out = torch.zeros_like(image)
        out[:, max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)] = \\
            image[:, max(-dy, 0):h + min(-dy, 0), max(-dx, 0):w + min(-dx, 0)]
        return out"""), feedback=["generator seeded 7", "whatever torch.manual_seed says"]),
        mistake("the upper end left out: shifts from -m to m - 1", _SHIFT.format(body="""\
        m = self.max_shift
        dy, dx = torch.randint(-m, m, (2,), generator=self.generator).tolist()
        _, h, w = image.shape
        out = torch.zeros_like(image)
        out[:, max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)] = \\
            image[:, max(-dy, 0):h + min(-dy, 0), max(-dx, 0):w + min(-dx, 0)]
        return out"""), feedback=["shifts seen in 100 calls", "the upper end of torch.randint is left out"]),
        mistake("the input changed in place", _SHIFT.format(body="""\
        m = self.max_shift
        dy, dx = torch.randint(-m, m + 1, (2,), generator=self.generator).tolist()
        _, h, w = image.shape
        padded = F.pad(image, (m, m, m, m))
        image.copy_(padded[:, m - dy:m - dy + h, m - dx:m - dx + w])
        return image"""), feedback=["the input image after call 0", "must not change its input"]),
        mistake("RandomShift(0) hands back the image itself", _SHIFT.format(body="""\
        m = self.max_shift
        if m == 0:
            return image
        dy, dx = torch.randint(-m, m + 1, (2,), generator=self.generator).tolist()
        _, h, w = image.shape
        out = torch.zeros_like(image)
        out[:, max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)] = \\
            image[:, max(-dy, 0):h + min(-dy, 0), max(-dx, 0):w + min(-dx, 0)]
        return out"""), feedback=["RandomShift(0)(image) shares the input's memory"]),
    ],
}
