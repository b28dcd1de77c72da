"""Learner variants of chapter 09 (saving, resuming, deploying): 09.1 a checkpoint that resumes
exactly, 09.2 deploy a model and run it in ONNX Runtime.  See course/variants.py for the format."""
from course.variants import correct, mistake

_SAVE_ALL = '''\
def save_checkpoint(path, model, optimizer, scheduler, epoch, loader_generator):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch,
                "rng": torch.get_rng_state(), "loader_rng": loader_generator.get_state()}, path)

'''


def _resume(body, save=_SAVE_ALL):
    """The full save_checkpoint (unless ``save`` says otherwise) and a resume whose body,
    after ``state = torch.load(path)``, is ``body`` (indented 4)."""
    return (save + "\ndef resume(path, model, optimizer, scheduler, loader_generator):\n"
            "    state = torch.load(path)\n" + body)


_RESTORE = {
    "model": '    model.load_state_dict(state["model"])\n',
    "optimizer": '    optimizer.load_state_dict(state["optimizer"])\n',
    "scheduler": '    scheduler.load_state_dict(state["scheduler"])\n',
    "rng": '    torch.set_rng_state(state["rng"])\n',
    "loader_rng": '    loader_generator.set_state(state["loader_rng"])\n',
}


def _restore_all_but(left_out, returns='    return state["epoch"]\n', extra="", save=_SAVE_ALL):
    """resume without the line that restores ``left_out`` (a key of ``_RESTORE``, or a tuple)."""
    left_out = left_out if isinstance(left_out, tuple) else (left_out,)
    return _resume("".join(line for key, line in _RESTORE.items() if key not in left_out)
                   + extra + returns, save)


def _deploy(export, run=None):
    """A solution cell of 09.2: ``export`` is export_for_deployment's body (indented 4),
    ``run`` onnx_logits's (the instructor's when None)."""
    run = run or ('    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])\n'
                  '    (logits,) = session.run(["logits"], {"images": images.numpy()})\n'
                  '    return torch.from_numpy(logits)\n')
    return ("import onnxruntime as ort\n\n\n"
            "def export_for_deployment(model, path):\n" + export +
            "\n\ndef onnx_logits(path, images):\n" + run)


_EXPORT = '''\
    model.eval()
    torch.onnx.export(model, (torch.zeros(1, 1, 8, 8),), path, input_names=["images"],
                      output_names=["logits"], dynamic_axes={dynamic}, dynamo=False)
'''
_BATCH = '{"images": {0: "batch"}, "logits": {0: "batch"}}'


VARIANTS = {
    "09.1": [
        correct("a list in a fixed order, unpacked on resume", """
            def save_checkpoint(path, model, optimizer, scheduler, epoch, loader_generator):
                torch.save([epoch, model.state_dict(), optimizer.state_dict(), scheduler.state_dict(),
                            torch.get_rng_state(), loader_generator.get_state()], path)


            def resume(path, model, optimizer, scheduler, loader_generator):
                epoch, weights, adam, schedule, rng, loader_rng = torch.load(path)
                model.load_state_dict(weights)
                optimizer.load_state_dict(adam)
                scheduler.load_state_dict(schedule)
                torch.set_rng_state(rng)
                loader_generator.set_state(loader_rng)
                return epoch
        """),
        correct("nested dicts, written and read through file objects, random states restored first", """
            def save_checkpoint(path, model, optimizer, scheduler, epoch, loader_generator):
                checkpoint = {
                    "training": {"weights": model.state_dict(), "adam": optimizer.state_dict(),
                                 "schedule": scheduler.state_dict(), "epochs_done": epoch},
                    "random": {"default": torch.get_rng_state(), "loader": loader_generator.get_state()},
                }
                with open(path, "wb") as f:
                    torch.save(checkpoint, f)


            def resume(path, model, optimizer, scheduler, loader_generator):
                with open(path, "rb") as f:
                    checkpoint = torch.load(f)
                torch.set_rng_state(checkpoint["random"]["default"])
                loader_generator.set_state(checkpoint["random"]["loader"])
                training = checkpoint["training"]
                for part, state in ((model, training["weights"]), (optimizer, training["adam"]),
                                    (scheduler, training["schedule"])):
                    part.load_state_dict(state)
                return training["epochs_done"]
        """),
        mistake("no random states in the checkpoint", _restore_all_but(
            ("rng", "loader_rng"), save='''\
def save_checkpoint(path, model, optimizer, scheduler, epoch, loader_generator):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch}, path)

'''),
            feedback=["torch.get_rng_state()", "dropout"]),
        mistake("the loader's generator forgotten", _restore_all_but("loader_rng", save='''\
def save_checkpoint(path, model, optimizer, scheduler, epoch, loader_generator):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch,
                "rng": torch.get_rng_state()}, path)

'''), feedback=["loader_generator.get_state()", "shuffles"]),
        mistake("the random state saved but not restored", _restore_all_but("rng"),
                feedback=["torch.set_rng_state"]),
        mistake("seeding again on resume instead of restoring the random state",
                _restore_all_but("rng", extra="    torch.manual_seed(0)\n"),
                feedback=["torch.set_rng_state"]),
        mistake("the optimizer's state not restored", _restore_all_but("optimizer"),
                feedback=["optimizer.load_state_dict", "Adam"]),
        mistake("the scheduler's state not restored", _restore_all_but("scheduler"),
                feedback=["scheduler.load_state_dict"]),
        mistake("resume returns the epoch after the one saved",
                _restore_all_but(None, returns='    return state["epoch"] + 1\n'),
                feedback=["the epoch to go on from"]),
    ],
    "09.2": [
        correct("a file object, no eval() (the export's default is inference), input names read "
                "from the session", _deploy('''\
    with open(path, "wb") as f:
        torch.onnx.export(model, (torch.randn(4, 1, 8, 8),), f, input_names=["images"],
                          output_names=["logits"],
                          dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}})
''', run='''\
    session = ort.InferenceSession(str(path))
    feed = {session.get_inputs()[0].name: np.ascontiguousarray(images.numpy())}
    return torch.tensor(session.run(None, feed)[0])
''')),
        correct("training=TrainingMode.EVAL said out loud; the model's bytes given to ONNX Runtime",
                _deploy('''\
    example = torch.zeros(2, 1, 8, 8)
    torch.onnx.export(model, example, str(path), input_names=["images"], output_names=["logits"],
                      dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}},
                      training=torch.onnx.TrainingMode.EVAL, dynamo=False)
''', run='''\
    with open(path, "rb") as f:
        session = ort.InferenceSession(f.read(), providers=["CPUExecutionProvider"])
    outputs = session.run(["logits"], {"images": images.numpy().astype(np.float32)})
    return torch.as_tensor(outputs[0])
''')),
        mistake("no dynamic_axes: the graph only takes a batch of one image",
                _deploy(_EXPORT.replace(", dynamic_axes={dynamic}", "")),
                feedback=["dynamic_axes", "batch"]),
        mistake("dynamic_axes as lists: the batch dimension gets a made-up name",
                _deploy(_EXPORT.format(dynamic='{"images": [0], "logits": [0]}')),
                feedback=["dynamic_axes", "named \"batch\""]),
        mistake("input_names and output_names left out",
                _deploy(_EXPORT.replace('input_names=["images"],\n                      '
                                        'output_names=["logits"], ', "")
                        .format(dynamic='{"input": {0: "batch"}, "output": {0: "batch"}}'),
                        run='''\
    session = ort.InferenceSession(str(path))
    return torch.from_numpy(session.run(None, {session.get_inputs()[0].name: images.numpy()})[0])
'''), feedback=["input_names=[\"images\"]"]),
        mistake("onnx_logits returns ONNX Runtime's numpy array, not a tensor",
                _deploy(_EXPORT.format(dynamic=_BATCH), run='''\
    session = ort.InferenceSession(str(path))
    return session.run(["logits"], {"images": images.numpy()})[0]
'''), feedback=["expected a tensor"]),
    ],
}
