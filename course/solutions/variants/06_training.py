"""Learner variants of chapter 06 (training): 06.1 your training loop, 06.2 early stopping.
See course/variants.py for the format."""
from course.variants import correct, mistake


def _train(epoch_body, after="    model.load_state_dict(best_state)\n    return history\n",
           keep="            best_accuracy, best_state = val_accuracy, copy.deepcopy(model.state_dict())\n"):
    """train() with the usual set-up; ``epoch_body`` is the inside of the epoch loop up to the
    validation numbers (indented 8), ``keep`` what it does on a new best, ``after`` its end."""
    return ("def train(model, train_loader, val_loader, epochs):\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)\n"
            "    history = {'train_loss': [], 'val_loss': [], 'val_accuracy': []}\n"
            "    best_accuracy, best_state = -1.0, None\n"
            "    for epoch in range(epochs):\n" + epoch_body +
            "        history['train_loss'].append(total / count)\n"
            "        history['val_loss'].append(val_loss)\n"
            "        history['val_accuracy'].append(val_accuracy)\n"
            "        if val_accuracy > best_accuracy:\n" + keep + after)


_TRAIN_EPOCH = """\
        model.train()
        total, count = 0.0, 0
        for images, labels in train_loader:
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(labels)
            count += len(labels)
"""


def _stopper(step):
    return ("class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.best_epoch, self.bad_epochs = math.inf, None, 0\n"
            "        self.calls = 0\n\n"
            "    def step(self, val_loss):\n" + step)


VARIANTS = {
    "06.1": [
        correct("SGD with momentum, the mean of the batch losses, the checkpoint's epoch remembered", """
            def train(model, train_loader, val_loader, epochs):
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
                history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
                best = None
                for epoch in range(epochs):
                    model.train()
                    batch_losses = []
                    for images, labels in train_loader:
                        optimizer.zero_grad()
                        loss = F.cross_entropy(model(images), labels)
                        loss.backward()
                        optimizer.step()
                        batch_losses.append(loss.item())
                    history["train_loss"].append(sum(batch_losses) / len(batch_losses))
                    val_loss, val_accuracy = evaluate(model, val_loader)
                    history["val_loss"].append(val_loss)
                    history["val_accuracy"].append(val_accuracy)
                    if best is None or val_accuracy > best[0]:
                        best = (val_accuracy, epoch, copy.deepcopy(model.state_dict()))
                model.load_state_dict(best[2])
                return history
        """),
        correct("Adam; its own validation loop, summing the loss per sample", _train(
            _TRAIN_EPOCH + """\
        model.eval()
        val_total, right, seen = 0.0, 0, 0
        with torch.no_grad():
            for images, labels in val_loader:
                scores = model(images)
                val_total += F.cross_entropy(scores, labels, reduction="sum").item()
                right += (scores.argmax(1) == labels).sum().item()
                seen += labels.shape[0]
        val_loss, val_accuracy = val_total / seen, right / seen
""")),
        mistake("the last epoch's weights kept, no checkpoint restored", _train(
            _TRAIN_EPOCH + "        val_loss, val_accuracy = evaluate(model, val_loader)\n",
            after="    return history\n"),
            feedback=["restore the best weights", "copy.deepcopy"]),
        mistake("a checkpoint without a copy: state_dict() shares memory with the parameters", _train(
            _TRAIN_EPOCH + "        val_loss, val_accuracy = evaluate(model, val_loader)\n",
            keep="            best_accuracy, best_state = val_accuracy, model.state_dict()\n"),
            feedback=["restore the best weights", "shares memory"]),
        mistake("validation in training mode, with a graph", _train(
            _TRAIN_EPOCH + """\
        val_total, right, seen = 0.0, 0, 0
        for images, labels in val_loader:
            scores = model(images)
            val_total += F.cross_entropy(scores, labels, reduction="sum").item()
            right += (scores.argmax(1) == labels).sum().item()
            seen += len(labels)
        val_loss, val_accuracy = val_total / seen, right / seen
"""), feedback=["validation passes that run in training mode or record a graph"]),
        mistake("model.train() forgotten after the first evaluation", _train(
            _TRAIN_EPOCH.replace("        model.train()\n", "") +
            "        val_loss, val_accuracy = evaluate(model, val_loader)\n"),
            feedback=["training forward passes that run in eval mode", "model.train()"]),
        mistake("train_loss measured after the epoch, in eval mode", _train(
            _TRAIN_EPOCH + "        total, count = evaluate(model, train_loader)[0], 1\n"
            "        val_loss, val_accuracy = evaluate(model, val_loader)\n"),
            feedback=['history["train_loss"][0]', "training batches"]),
        mistake("the mean loss per validation batch, not per sample", _train(
            _TRAIN_EPOCH + """\
        model.eval()
        with torch.no_grad():
            batch_losses, right, seen = [], 0, 0
            for images, labels in val_loader:
                scores = model(images)
                batch_losses.append(F.cross_entropy(scores, labels).item() * 2)
                right += (scores.argmax(1) == labels).sum().item()
                seen += len(labels)
        val_loss, val_accuracy = sum(batch_losses) / len(batch_losses), right / seen
"""), feedback=["validation loss of the returned model", "the mean per sample"]),
    ],
    "06.2": [
        correct("the epoch counted by a counter; the test written as improvement", _stopper("""\
        improved = val_loss < self.best_loss - self.min_delta
        if improved:
            self.best_loss, self.best_epoch, self.bad_epochs = val_loss, self.calls, 0
        else:
            self.bad_epochs += 1
        self.calls += 1
        return self.bad_epochs >= self.patience
""")),
        correct("a list of every loss seen; NaN filtered with math.isnan", _stopper("""\
        self.history = getattr(self, "history", []) + [val_loss]
        if not math.isnan(val_loss) and self.best_loss - val_loss > self.min_delta:
            self.best_loss = val_loss
            self.best_epoch = len(self.history) - 1
            self.bad_epochs = 0
        else:
            self.bad_epochs = self.bad_epochs + 1
        return not self.bad_epochs < self.patience
""")),
        mistake("<= instead of <: an equal loss counts as an improvement", _stopper("""\
        if val_loss <= self.best_loss - self.min_delta:
            self.best_loss, self.best_epoch, self.bad_epochs = val_loss, self.calls, 0
        else:
            self.bad_epochs += 1
        self.calls += 1
        return self.bad_epochs >= self.patience
"""), feedback=["fed [1.0, 1.0, 1.0]", "not <="]),
        mistake("a NaN counted as an improvement", _stopper("""\
        if not (val_loss >= self.best_loss - self.min_delta):
            self.best_loss, self.best_epoch, self.bad_epochs = val_loss, self.calls, 0
        else:
            self.bad_epochs += 1
        self.calls += 1
        return self.bad_epochs >= self.patience
"""), feedback=["nan", "a NaN loss is never an improvement"]),
        mistake("min_delta ignored", _stopper("""\
        if val_loss < self.best_loss:
            self.best_loss, self.best_epoch, self.bad_epochs = val_loss, self.calls, 0
        else:
            self.bad_epochs += 1
        self.calls += 1
        return self.bad_epochs >= self.patience
"""), feedback=["min_delta=0.05", "by more than min_delta"]),
        mistake("bad_epochs not reset on an improvement", _stopper("""\
        if val_loss < self.best_loss - self.min_delta:
            self.best_loss, self.best_epoch = val_loss, self.calls
        else:
            self.bad_epochs += 1
        self.calls += 1
        return self.bad_epochs >= self.patience
"""), feedback=["fed [1.0, 0.9, 0.95, 0.97, 0.85, 0.9, 0.91, 0.92]", "until True"]),
        mistake("best_epoch counted from 1", _stopper("""\
        self.calls += 1
        if val_loss < self.best_loss - self.min_delta:
            self.best_loss, self.best_epoch, self.bad_epochs = val_loss, self.calls, 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience
"""), feedback=["(best_loss, best_epoch, bad_epochs)", "expected: tuple (0.6, 2, 3)"]),
    ],
}
