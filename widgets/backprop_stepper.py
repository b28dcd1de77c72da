"""BackpropStepper: the engine's own backward, one node at a time -- the chain rule made visible.

``loss.backward()`` visits every node of the graph behind ``loss``, from the
loss towards the leaves.  At each node it takes the gradient that arrived,
``g = ∂loss/∂out``, multiplies it by the node's local derivative and sends the
result to each input; where the forward had broadcast an input, the engine sums
the gradient over the broadcast dimensions first, and at a leaf it adds the
gradient into ``.grad``.  The stepper runs exactly that -- the engine's
``learntorch.autograd.graph.backward_steps`` generator, never a copy of it --
and stops after every node so you can read what happened::

    >>> import learntorch as torch
    >>> from widgets import BackpropStepper
    >>> w = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> b = torch.tensor([0.5], requires_grad=True)
    >>> x = torch.ones(4, 3)
    >>> stepper = BackpropStepper((x * w + b).sum(), params={"w": w, "b": b})
    >>> stepper
    BackpropStepper(step 0 of 5: before backward)
    >>> stepper.step().name
    'SumBackward0'
    >>> stepper.step().sent[1].summed_dims    # b was broadcast over the 4 rows
    (0, 1)
    >>> stepper.run_to_end()
    >>> w.grad, b.grad                           # exactly what loss.backward() leaves
    (tensor([4., 4., 4.]), tensor([12.]))

**Going back.**  The engine cannot un-run a node, so ``previous()`` and the
slider show the recorded past: every step keeps a copy of the numbers it
produced and of every leaf's ``.grad`` after it.  The leaves follow what is
shown: at step 0 their ``.grad`` is what it was before the stepper was made (as
if backward had not run), at step k what backward had left after k nodes.
Stepping forward again replays the record, then runs the engine on from where
it stopped.  **Reset** is ``go_to(0)``: the record stays, nothing runs twice.

**The graph** is left as ``loss.backward()`` leaves it: each node's saved
tensors are freed as soon as the node has run, so once the stepper has reached
the end a second ``loss.backward()`` raises, as in PyTorch.  Pass
``retain_graph=True``, as to ``backward``, to keep them (a later
``loss.backward()`` then adds the gradients a second time)::

    >>> loss = (w * w).sum()
    >>> BackpropStepper(loss).run_to_end()
    >>> try:
    ...     loss.backward()
    ... except RuntimeError as error:
    ...     print(str(error)[:50])
    Trying to backward through the graph a second time
"""
import learntorch
from learntorch.autograd.graph import backward_steps, walk

from ._base import Widget
from ._stepper_record import record_step, to_numpy
from . import _stepper_text as text


# the picture's colours (names both Graphviz and matplotlib know), explained under it
CURRENT, DONE, GRAD_SET = "gold", "lightgreen", "plum"
LEGEND = ("gold, red border: the node running now · light green: nodes that ran\n"
          "plum: leaves whose .grad is set")


def _named_tensors(params):
    """``params`` as a dict name -> tensor (a dict, or pairs such as ``model.named_parameters()``)."""
    if params is None:
        return {}
    if isinstance(params, learntorch.nn.Module):
        raise TypeError("params names the leaves: pass params=dict(model.named_parameters()) "
                        "(or model.named_parameters()), not the module itself")
    try:
        return dict(params.items() if hasattr(params, "items") else params)
    except (TypeError, ValueError) as error:
        raise TypeError(f"params must be a dict name -> tensor or (name, tensor) pairs, e.g. "
                        f"{{'w': w}} or model.named_parameters(); got {type(params).__name__}"
                        ) from error


def _leaf_labels(leaves, names):
    """A name for each leaf: its name in ``names`` (name -> tensor) when given, else ``leaf<i>``."""
    by_tensor = {id(tensor): str(name) for name, tensor in names.items()}
    return tuple(by_tensor.get(id(leaf), f"leaf{i}") for i, leaf in enumerate(leaves))


class BackpropStepper(Widget):
    """Step through ``loss.backward()`` one node at a time.

    * ``loss`` -- a tensor with a ``grad_fn`` (a scalar, or pass ``gradient=``
      as for ``loss.backward(gradient)``);
    * ``params`` -- optional names for the leaves: a dict name -> tensor or
      ``model.named_parameters()``; other leaves are called ``leaf0``, ``leaf1``... in walk order;
    * ``gradient``, ``retain_graph`` -- as for ``loss.backward(gradient, retain_graph)``;
    * ``direction`` -- the picture's layout: ``"LR"`` (left to right), ``"TB"`` (top to
      bottom) or ``"auto"`` (left to right when it fits a notebook's width, else the
      narrower of the two; see ``show_graph``);
    * ``nodes`` -- ``walk(loss)``: every node, in the order backward runs them;
    * ``leaves`` / ``leaf_labels`` -- the leaf tensors and their names;
    * ``position`` -- how many steps are shown as done (0 = before backward);
    * ``n_steps`` -- how many steps backward takes;
    * ``history`` -- a ``StepRecord`` per step run so far, in engine order;
    * ``step()`` / ``previous()`` / ``go_to(k)`` / ``run_to_end()`` / ``reset()``.

    >>> import learntorch as torch
    >>> a = torch.tensor(2., requires_grad=True)
    >>> stepper = BackpropStepper((a * a).exp())
    >>> [n.name for n in stepper.nodes]
    ['ExpBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> stepper.go_to(2)
    >>> stepper
    BackpropStepper(step 2 of 3: MulBackward0)
    """

    def __init__(self, loss, params=None, gradient=None, *, retain_graph=False, direction="auto"):
        if direction not in ("auto", "LR", "TB"):
            raise ValueError(f"direction must be 'LR' (left to right), 'TB' (top to bottom) or "
                             f"'auto', got {direction!r}")
        if not isinstance(loss, learntorch.Tensor):
            raise TypeError(f"BackpropStepper(loss) needs a learntorch Tensor, got "
                            f"{type(loss).__name__}; pass the loss tensor, e.g. "
                            "BackpropStepper(loss_fn(model(x), y))")
        self.loss = loss
        self._gradient = gradient
        self.retain_graph = bool(retain_graph)
        # walk keeps every node alive, so id(node) is a stable key while the stepper lives
        self.nodes = walk(loss)
        self._node_ids = {id(info.node): info.id for info in self.nodes}
        self._names = {info.id: info.name for info in self.nodes}
        leaf_infos = [info for info in self.nodes if info.is_leaf]
        self.leaves = tuple(info.variable for info in leaf_infos)
        self._params = _named_tensors(params)
        self.leaf_labels = _leaf_labels(self.leaves, self._params)
        self._leaf_node_ids = tuple(info.id for info in leaf_infos)
        self._labels_by_node = dict(zip(self._leaf_node_ids, self.leaf_labels))
        # how many edges lead into each node: a tensor used twice gets two gradients, summed
        self._uses = {}
        for info in self.nodes:
            for target, _ in info.inputs:
                if target is not None:
                    self._uses[target] = self._uses.get(target, 0) + 1
        # what .grad was before the stepper ran anything: reset() restores it
        self._grads_before = tuple(None if leaf.grad is None else leaf.grad.detach().clone()
                                   for leaf in self.leaves)
        self._graph = None  # the picture's nodes and edges, built on first use
        self.direction = direction  # "auto" becomes "LR" or "TB" at the first picture
        self._pictures = {}
        self._start()

    # ---- the state ------------------------------------------------------------------

    def _start(self):
        # backward_steps checks its arguments at once (a non-scalar loss without
        # gradient=, a loss outside autograd), so a bad loss fails here, not later
        self._engine = backward_steps(self.loss, gradient=self._gradient,
                                      retain_graph=self.retain_graph)
        self._finished = False
        self._failure = None
        self.history = []
        self.position = 0
        # a node that receives no gradient at all is skipped by the engine; n_steps
        # is corrected when the engine finishes
        self.n_steps = len(self.nodes)
        self._initial_leaf_grads = tuple(to_numpy(g) for g in self._grads_before)
        # the leaves' .grad as the engine left them, kept while an earlier step is shown
        self._engine_grads = None

    def _show(self, position):
        """Show ``position`` (already recorded): the leaves' ``.grad`` become what they were
        then -- the engine's own tensors at the furthest step reached, copies elsewhere."""
        furthest = len(self.history)
        if self.position == furthest and position != furthest:
            self._engine_grads = tuple(leaf.grad for leaf in self.leaves)
        self.position = position
        if position == furthest:
            if self._engine_grads is not None:
                for leaf, grad in zip(self.leaves, self._engine_grads):
                    leaf.grad = grad
                self._engine_grads = None
            return
        for leaf, recorded in zip(self.leaves, self.leaf_grads()):
            leaf.grad = None if recorded is None else learntorch.tensor(
                recorded, dtype=leaf.dtype, device=leaf.device)

    def _run_engine_step(self):
        """Pull the next step out of the engine (from the furthest step reached, which is
        then shown); False when backward has finished."""
        if self._finished:
            return False
        self._show(len(self.history))  # the engine adds into the .grad it left
        if self._failure is not None:
            # a generator that raised is over: say why again instead of claiming backward ended
            raise RuntimeError(f"backward stopped at step {len(self.history) + 1} of "
                               f"{self.n_steps}: {self._failure}") from self._failure
        try:
            step = next(self._engine)
        except StopIteration:
            self._finished = True
            self.n_steps = len(self.history)
            return False
        except Exception as error:  # e.g. the graph was freed by an earlier backward()
            self._failure = error
            raise
        before = self.history[-1].leaf_grads if self.history else self._initial_leaf_grads
        self.history.append(record_step(step, self._node_ids, self._names, self.leaves, before))
        self.position = len(self.history)
        return True

    @property
    def finished(self):
        """True when the position shown is the last step of backward."""
        return self.position == self.n_steps

    @property
    def current(self):
        """The ``StepRecord`` shown now (None at position 0, before backward)."""
        return self.history[self.position - 1] if self.position else None

    def step(self):
        """Move one step forward (running the engine's next node if it has not run yet).

        Returns the ``StepRecord`` now shown, or None when backward had already finished.
        """
        if self.position == len(self.history):
            if not self._run_engine_step():
                return None
        else:
            self._show(self.position + 1)
        return self.current

    def previous(self):
        """Move one step back: show the recorded step before (the engine does not move)."""
        if self.position > 0:
            self._show(self.position - 1)
        return self.current

    def go_to(self, position):
        """Show the state after ``position`` steps, running the engine forward as needed."""
        if not 0 <= position <= self.n_steps:
            raise IndexError(f"step {position} is out of range: this backward has steps "
                             f"0 to {self.n_steps} (0 = before backward)")
        while len(self.history) < position and self._run_engine_step():
            pass
        self._show(min(position, len(self.history)))

    def run_to_end(self):
        """Run the rest of backward: the leaves then hold exactly what ``loss.backward()`` gives,
        and the graph is freed as it frees it (unless ``retain_graph=True``)."""
        while self._run_engine_step():
            pass
        self._show(len(self.history))

    def reset(self):
        """Show step 0 again: every leaf's ``.grad`` as it was before the stepper ran.  The
        steps stay recorded (stepping forward replays them), so nothing runs twice."""
        self.go_to(0)

    def leaf_grads(self):
        """Every leaf's ``.grad`` (numpy copies, None where not set) as of the position shown."""
        return self.current.leaf_grads if self.current else self._initial_leaf_grads

    def describe(self):
        """The position shown, in words: the incoming gradient, the rule, what was sent where,
        and every leaf's ``.grad``."""
        lines = [self.headline()] + [line for _, line in self.step_lines()]
        return "\n".join(lines + ["leaves:"] + ["  " + line for line in self.leaf_lines()])

    def headline(self):
        """One line: which step is shown (or, before backward, which node runs first)."""
        if self.current is None:
            first = self.nodes[0].name if self.nodes else "nothing"
            return text.headline(0, self.n_steps, None, first)
        return text.headline(self.position, self.n_steps, self.current, None)

    def step_lines(self):
        """The current step as ``(kind, text)`` lines (empty before backward); see ``_stepper_text``."""
        if self.current is None:
            return []
        return text.step_lines(self.current, self.leaf_labels, self._labels_by_node,
                               self._uses.get(self.current.node_id, 1))

    def leaf_lines(self):
        """One line per leaf: its name, shape and ``.grad`` as of the position shown."""
        shapes = [leaf.shape for leaf in self.leaves]
        return text.leaf_lines(self.leaf_labels, shapes, self.leaf_grads())

    def __repr__(self):
        what = self.current.name if self.current else "before backward"
        return f"BackpropStepper(step {self.position} of {self.n_steps}: {what})"

    # ---- the picture ----------------------------------------------------------------

    def _picture_graph(self):
        """The graph picture's model (``widgets._dot``), built once: the layout never changes."""
        if self._graph is None:
            from ._dot import build_graph

            # the leaves carry the stepper's labels, so picture and text use the same names
            names = {**self._params, **dict(zip(self.leaf_labels, self.leaves))}
            self._graph = build_graph(self.loss, names, show_saved=False)
            self._graph.message = self._graph.message or LEGEND  # drawn under the graph
        return self._graph

    def dot_source(self):
        """DOT text of the graph for the position shown: the current node gold with a red
        border, the nodes that ran light green, each leaf's ``.grad`` as of this step."""
        graph = self._picture_graph()
        grads = dict(zip(self._leaf_node_ids, self.leaf_grads()))
        for node in graph.nodes:
            walk_id = int(node.id[1:]) if node.id[1:].isdigit() else None
            if node.kind == "leaf" and walk_id in grads:
                # the grad cell shows the recorded value of this step, not the leaf's live
                # .grad (this graph model belongs to the stepper: rewriting its cells is safe)
                grad = grads[walk_id]
                cell = "grad " + ("None" if grad is None
                                  else text.format_values(grad, small=12).replace("\n    ", "\n"))
                node.fields = [f for f in node.fields if not f.startswith("grad")] + [cell]
        styles = {f"n{record.node_id}": {"fillcolor": DONE}
                  for record in self.history[:self.position]}
        styles.update({f"v{walk_id}": {"fillcolor": GRAD_SET}
                       for walk_id, grad in grads.items() if grad is not None})
        highlight = ()
        if self.current is not None:
            highlight = (self.current.node_id,)
            styles[f"n{self.current.node_id}"] = {"fillcolor": CURRENT}
        if self.direction == "auto":
            # chosen once, for the picture before backward, so the layout never jumps
            from ._graphviz import fitting_direction

            self.direction = fitting_direction(lambda d: graph.to_dot((), direction=d))
        return graph.to_dot(highlight, styles, direction=self.direction)

    def static_svg(self):
        """SVG of the graph for the position shown (Graphviz's ``dot`` when installed,
        else a plain drawing; see ``widgets._graphviz``)."""
        from ._graphviz import render_svg

        # one step recolours a few nodes, but dot lays the whole graph out again (tens
        # of ms): each position's picture is drawn once, then reused
        if self.position not in self._pictures:
            svg = render_svg(self.dot_source())
            self._pictures[self.position] = svg[svg.find("<svg"):]  # no XML prolog in HTML
        return self._pictures[self.position]

    # ---- the view -------------------------------------------------------------------

    def _build_view(self):
        from ._stepper_view import StepperView

        return StepperView(self).box
