"""Views for autograd: a view op's result shares its base's memory, and the base remembers it.

A view (``view``, ``transpose``, slicing, ``expand``, ...) is a tensor over the memory
of another (its ``_base``), with the same version counter.  When an in-place op later
changes the base -- or another view of it -- every live view shows new values, so its
history must be re-linked (``_inplace.py`` does that); for that the base keeps weak
references to its views, made here.
"""
import weakref


def view_of(ctx, x, array):
    """A view of ``x`` over the numpy view ``array`` of its memory (what view ops return).

    Called from a view op's forward (``ctx`` is its node).  The base remembers its
    views, so that an in-place change of the base (or of another view) can re-link
    their history.  Not remembered: views of a leaf that requires grad (such a leaf
    only changes under no_grad) and views of a graph tensor taken under no_grad
    (they stay out of the graph, as in torch).
    """
    view = x._view_of(array)
    if x._requires_grad:
        # torch: a view of a tensor that requires grad requires grad too -- recorded, it
        # gets this node as grad_fn; taken under no_grad, it is a leaf that requires grad
        view._requires_grad = True
    base = view._base
    recording = any(ctx.needs_input_grad)
    leaf = base._requires_grad and base._grad_fn is None
    if (recording or not x._requires_grad) and not leaf:
        views = base.__dict__.setdefault("_views", {})
        key = id(view)

        def forget(ref, views=views, key=key):
            if views.get(key) is ref:
                del views[key]
        views[key] = weakref.ref(view, forget)
    return view


def is_registered_view(base, x):
    """True when ``x`` is a live view ``view_of`` registered on ``base``."""
    ref = base.__dict__.get("_views", {}).get(id(x))
    return ref is not None and ref() is x


def live_views(base):
    """The views of ``base`` that are still alive."""
    views = base.__dict__.get("_views")
    if not views:
        return []
    return [v for v in (ref() for ref in list(views.values())) if v is not None]
