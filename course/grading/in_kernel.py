"""What grading runs inside a kernel, before and between the notebook's cells.

The grader sends these calls as silent cells of their own (``course/grading/kernel.py``):

- ``begin(mode, channel)`` once: the checks of ``course.checks`` report what they
  compare through the pipe ``channel`` -- as well as judging it, in the instructor's
  run ("trusted"); instead of judging it, in a submission's ("sandbox");
- ``snapshot_rng()`` before every cell of the instructor's run that is not a solution,
  and ``restore_rng(state)`` before the same cell of a submission's run: each of those
  cells starts with the random number generators exactly where the instructor's run
  had them, whatever the learner's code drew before.  A check's random inputs are then
  the instructor's, and a wrong answer in one exercise cannot shift the inputs of the
  next.

The states travel as opaque text: the instructor's kernel pickles them, the grader
stores and forwards the text without ever unpickling it, and only the submission's
kernel -- for which it is data from the instructor's run -- unpickles it.
"""
import base64
import pickle
import random
import sys

from .. import checks


def begin(mode, channel):
    checks._grading.mode = mode
    checks._grading.channel = channel


def _generators():
    """The generators a chapter may draw from: Python's, numpy's global one, and the
    default generator of learntorch (and of torch, when a chapter imports it)."""
    found = {"random": (random.getstate, random.setstate)}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        found["numpy"] = (numpy.random.get_state, numpy.random.set_state)
    for name in ("learntorch", "torch"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "get_rng_state"):
            found[name] = (module.get_rng_state, module.set_rng_state)
    return found


def snapshot_rng():
    states = {name: get() for name, (get, _) in _generators().items()}
    checks._grading.report({"rng": base64.b64encode(pickle.dumps(states)).decode("ascii")})


def restore_rng(text):
    states = pickle.loads(base64.b64decode(text))
    generators = _generators()
    for name, state in states.items():
        if name not in generators and name in ("learntorch", "torch", "numpy"):
            __import__(name)   # imported by the instructor's run at this point: here too
            generators = _generators()
        if name in generators:
            generators[name][1](state)
