"""Chapter 06's digits MLP as a program: train it, report test accuracy and time.

    python -m course.programs.train_digits_mlp [--epochs 8]

Runs on PyTorch with one change: the first import becomes ``import torch``.  The digits
ship with learntorch, so both libraries read them through numpy (``from_numpy``); everything
else -- the model, the loader, the loop -- is the same code on both.  The last line it prints
is a JSON record (library, accuracy, seconds) for the programs that compare the two runs.
"""
import argparse
import json
import time

import learntorch as torch

from learntorch.datasets import Digits


def as_tensors(train):
    # the digits as (images float32 (N, 1, 8, 8) in [0, 1], labels int64) of *this* library
    digits = Digits(train=train)
    pixels = digits.data.numpy().astype("float32") / 16
    return torch.from_numpy(pixels).unsqueeze(1), torch.from_numpy(digits.targets.numpy())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    train_x, train_y = as_tensors(train=True)
    test_x, test_y = as_tensors(train=False)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(train_x, train_y),
                                         batch_size=64, shuffle=True,
                                         generator=torch.Generator().manual_seed(0))
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    start = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        for images, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch + 1}: last batch loss {loss.item():.4f}")
    seconds = time.perf_counter() - start

    model.eval()
    with torch.no_grad():
        accuracy = (model(test_x).argmax(dim=1) == test_y).float().mean().item()
    print(f"{torch.__name__}: test accuracy {accuracy:.4f} after {args.epochs} epochs, "
          f"{seconds:.2f} s of training")
    print(json.dumps({"library": torch.__name__, "accuracy": accuracy, "seconds": seconds,
                      "epochs": args.epochs}))


if __name__ == "__main__":
    main()
