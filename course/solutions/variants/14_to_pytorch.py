"""Learner variants of chapter 14 (moving to PyTorch): 14.1 the digits as a PyTorch dataset,
14.2 one training step for either library.  See course/variants.py for the format."""
from course.variants import correct, mistake


def _port(body):
    return "def to_torch_dataset(digits):\n" + body


def _step(body):
    return "def train_step(torch, model, optimizer, images, labels):\n" + body


VARIANTS = {
    "14.1": [
        correct("sample by sample: each learntorch item converted, then stacked", _port(
            "    images, labels = [], []\n"
            "    for index in range(len(digits)):\n"
            "        image, label = digits[index]\n"
            "        images.append(torch.from_numpy(image.numpy()))\n"
            "        labels.append(label)\n"
            "    return torch.utils.data.TensorDataset(torch.stack(images), torch.tensor(labels))\n")),
        correct("torch.tensor from the raw counts, divided in PyTorch, view for the channel", _port(
            "    raw = torch.tensor(digits.data.numpy(), dtype=torch.float32)\n"
            "    images = (raw / 16).view(len(digits), 1, 8, 8)\n"
            "    labels = torch.tensor(digits.targets.numpy(), dtype=torch.int64)\n"
            "    return torch.utils.data.TensorDataset(images, labels)\n")),
        mistake("the learntorch tensors wrapped as they are", _port(
            "    images = learntorch.from_numpy(digits.data.numpy().astype(np.float32) / 16).unsqueeze(1)\n"
            "    labels = learntorch.from_numpy(digits.targets.numpy())\n"
            "    return torch.utils.data.TensorDataset(images, labels)\n"),
            feedback=["a PyTorch tensor", "torch.from_numpy"]),
        mistake("the raw counts 0..16, not scaled", _port(
            "    images = torch.from_numpy(digits.data.numpy().astype(np.float32)).unsqueeze(1)\n"
            "    return torch.utils.data.TensorDataset(images, torch.from_numpy(digits.targets.numpy()))\n"),
            feedback=["pixels", "divided by 16"]),
        mistake("no channel dimension: (N, 8, 8)", _port(
            "    images = torch.from_numpy(digits.data.numpy().astype(np.float32) / 16)\n"
            "    return torch.utils.data.TensorDataset(images, torch.from_numpy(digits.targets.numpy()))\n"),
            feedback=["(1, 8, 8)", "channel"]),
        mistake("uint8 images (scaled by integer division)", _port(
            "    images = torch.from_numpy(digits.data.numpy() // 16).unsqueeze(1)\n"
            "    return torch.utils.data.TensorDataset(images, torch.from_numpy(digits.targets.numpy()))\n"),
            feedback=["float32"]),
        mistake("labels as float32", _port(
            "    images = torch.from_numpy(digits.data.numpy().astype(np.float32) / 16).unsqueeze(1)\n"
            "    labels = torch.from_numpy(digits.targets.numpy().astype(np.float32))\n"
            "    return torch.utils.data.TensorDataset(images, labels)\n"),
            feedback=["int64"]),
    ],
    "14.2": [
        correct("F taken from the library first; gradients cleared before the forward", _step(
            "    F = torch.nn.functional\n"
            "    optimizer.zero_grad()\n"
            "    scores = model(images)\n"
            "    loss = F.cross_entropy(scores, labels, reduction='mean')\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return float(loss.detach())\n")),
        correct("the loss module instead of the function; set_to_none gradients by hand", _step(
            "    loss = torch.nn.CrossEntropyLoss()(model(images), labels)\n"
            "    for p in model.parameters():\n"
            "        p.grad = None\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss.detach().item()\n")),
        mistake("the module-level learntorch used instead of the argument", _step(
            "    loss = learntorch.nn.functional.cross_entropy(model(images), labels)\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss.item()\n"),
            feedback=["the library passed in as `torch`"]),
        mistake("gradients never cleared: they pile up step after step", _step(
            "    loss = torch.nn.functional.cross_entropy(model(images), labels)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss.item()\n"),
            feedback=["losses of 4 steps", "optimizer.zero_grad()"]),
        mistake("the loss tensor returned, not a float", _step(
            "    loss = torch.nn.functional.cross_entropy(model(images), labels)\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss\n"),
            feedback=["Python float", ".item()"]),
        mistake("the loss after the step returned (a second forward)", _step(
            "    loss = torch.nn.functional.cross_entropy(model(images), labels)\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    with torch.no_grad():\n"
            "        return torch.nn.functional.cross_entropy(model(images), labels).item()\n"),
            feedback=["the loss of the first step", "mean cross-entropy"]),
        mistake("the summed loss instead of the mean", _step(
            "    loss = torch.nn.functional.cross_entropy(model(images), labels, reduction='sum')\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss.item()\n"),
            feedback=["the loss of the first step", "mean cross-entropy"]),
    ],
}
