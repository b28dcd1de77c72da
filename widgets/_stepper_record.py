"""A frozen copy of one step of the engine's backward, for showing it again later.

The engine's ``BackwardStep`` holds live tensors: a leaf's ``.grad`` keeps
growing in place as later steps accumulate into it.  To let a learner step
*back* and see the numbers as they were, the stepper turns every step into a
``StepRecord`` of numpy copies the moment the engine yields it.
"""
import numpy as np


def to_numpy(tensor):
    """A numpy copy of a tensor's values (None stays None), detached from any later change."""
    if tensor is None:
        return None
    return np.array(tensor.detach().cpu().numpy(), copy=True)


def summed_dims(returned_shape, input_shape):
    """The dims that broadcasting's backward sums so a gradient fits its input.

    A forward that broadcast an input of ``input_shape`` up to ``returned_shape``
    used each of its numbers several times, so the gradients of those uses add
    up: leading dims the input did not have, and dims where the input had size 1.

    >>> summed_dims((4, 3), (3,))
    (0,)
    >>> summed_dims((4, 3), (4, 1))
    (1,)
    >>> summed_dims((2, 4, 3), (1, 3))
    (0, 1)
    """
    returned_shape, input_shape = tuple(returned_shape), tuple(input_shape)
    lead = len(returned_shape) - len(input_shape)
    dims = list(range(lead))
    for i, size in enumerate(input_shape):
        if size == 1 and returned_shape[lead + i] != 1:
            dims.append(lead + i)
    return tuple(dims)


class SentGradient:
    """The gradient one node sends to one of its inputs.

    * ``position`` -- which argument of the forward call (``a * b``: 0 is ``a``);
    * ``receiver_id``/``receiver_name`` -- the node it flows to (its ``walk`` id and name);
    * ``returned`` -- what the node's backward returned for that argument;
    * ``sent`` -- what the engine sent on: ``returned`` summed over ``summed_dims``
      when the forward had broadcast the argument (otherwise the same values).
    """

    __slots__ = ("position", "receiver_id", "receiver_name", "returned", "sent", "summed_dims")

    def __init__(self, position, receiver_id, receiver_name, returned, sent):
        self.position, self.receiver_id, self.receiver_name = position, receiver_id, receiver_name
        self.returned, self.sent = returned, sent
        self.summed_dims = summed_dims(returned.shape, sent.shape) \
            if returned.shape != sent.shape else ()

    @property
    def broadcast(self):
        """True when the engine summed over broadcast dims before sending."""
        return self.returned.shape != self.sent.shape

    def __repr__(self):
        return (f"SentGradient(input {self.position} -> {self.receiver_name}, "
                f"shape {tuple(self.sent.shape)})")


class StepRecord:
    """One step of backward, as numbers that no later step can change.

    * ``index`` -- 0, 1, 2, ... in the order the engine ran the nodes;
    * ``node_id``/``name`` -- the node (its id in ``walk(loss)``, torch's name);
    * ``grad_outputs`` -- the incoming gradient(s) ``∂loss/∂out``, one per output;
    * ``sent`` -- a ``SentGradient`` per input that received a gradient;
    * ``leaf_index`` -- for an ``AccumulateGrad`` step, which leaf (else None),
      and ``leaf_grad_before`` its ``.grad`` before the step (None the first time);
    * ``leaf_grads`` -- every leaf's ``.grad`` after this step (None: not yet set).
    """

    __slots__ = ("index", "node_id", "name", "grad_outputs", "sent", "leaf_index",
                 "leaf_grad_before", "leaf_grads")

    def __init__(self, index, node_id, name, grad_outputs, sent, leaf_index, leaf_grad_before,
                 leaf_grads):
        self.index, self.node_id, self.name = index, node_id, name
        self.grad_outputs, self.sent = grad_outputs, sent
        self.leaf_index, self.leaf_grad_before = leaf_index, leaf_grad_before
        self.leaf_grads = leaf_grads

    @property
    def is_leaf(self):
        return self.leaf_index is not None

    @property
    def leaf_grad(self):
        """For an ``AccumulateGrad`` step, the leaf's ``.grad`` right after it."""
        return self.leaf_grads[self.leaf_index] if self.is_leaf else None

    def __repr__(self):
        return f"StepRecord({self.index}, {self.name})"


def record_step(step, node_ids, names, leaves, previous_leaf_grads):
    """Copy the engine's ``BackwardStep`` into a ``StepRecord``.

    ``node_ids`` maps ``id(node)`` to the node's ``walk`` id (the stepper keeps
    the nodes alive, so the ids are stable), ``names`` the walk id to a short
    name, ``leaves`` lists the leaf tensors, ``previous_leaf_grads`` their
    recorded ``.grad`` after the step before.  Only the leaf this step
    accumulated into is copied again; the other entries are shared with the
    previous record (they are never written to).
    """
    node_id = node_ids[id(step.node)]
    grad_outputs = tuple(to_numpy(g) for g in step.grad_outputs)
    sent = []
    # pair each gradient sent on with its argument position: ``sent`` holds the very objects of
    # ``reduced``, in argument order, so the search goes on from the last position matched (one
    # object may be sent twice: add's backward sends g itself to both of its inputs)
    position = -1
    for receiver, _, gradient in step.sent:
        position = next(i for i in range(position + 1, len(step.reduced))
                        if step.reduced[i] is gradient)
        receiver_id = node_ids[id(receiver)]
        sent.append(SentGradient(position, receiver_id, names[receiver_id],
                                 to_numpy(step.grad_inputs[position]), to_numpy(gradient)))
    leaf_grads = previous_leaf_grads
    leaf_index = leaf_grad_before = None
    if step.leaf is not None:
        leaf_index = next(i for i, leaf in enumerate(leaves) if leaf is step.leaf)
        leaf_grad_before = previous_leaf_grads[leaf_index]
        leaf_grads = list(previous_leaf_grads)
        leaf_grads[leaf_index] = to_numpy(step.leaf_grad)
        leaf_grads = tuple(leaf_grads)
    return StepRecord(step.index, node_id, names[node_id], grad_outputs, tuple(sent), leaf_index,
                      leaf_grad_before, leaf_grads)
