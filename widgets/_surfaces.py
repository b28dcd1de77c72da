"""The 2-D loss surfaces the optimizer explorer draws and descends.

A surface is a function of one tensor ``p`` of shape ``(2,)`` -- the point
``(x, y)`` -- written with ordinary tensor operations, so that the gradient an
optimizer follows comes from the real autograd engine, exactly as it would for
a network's loss.  Around the function a ``Surface`` keeps what a picture needs:
a plotting window, a default starting point, the known minima and the value
there (when the surface has a minimum at all).

The formulas use only arithmetic operators and indexing (``p[0]``, ``p[1]``),
never library functions.  That has two consequences worth knowing:

* the same function runs on a learntorch tensor *and* on a PyTorch tensor, so
  the tests compare the gradients of the very same formula in both libraries;
* called on a grid tensor of shape ``(2, rows, cols)``, ``p[0]`` and ``p[1]``
  are whole grids and the formula evaluates every grid point at once -- that is
  how the contour background is computed in one call.

Example::

    >>> import learntorch as torch
    >>> bowl = quadratic(condition_number=10)
    >>> p = torch.tensor([1.0, 1.0], requires_grad=True)
    >>> bowl(p).backward()
    >>> p.grad
    tensor([ 1., 10.])
"""
import math

import numpy as np

import learntorch

# learning rates that make each optimizer move visibly, without diverging, within
# a couple of hundred steps from the surface's default start (found by trying)
GENERIC_LEARNING_RATES = {"SGD": 0.01, "Momentum": 0.005, "Nesterov": 0.005, "RMSprop": 0.01,
                          "Adagrad": 0.3, "Adam": 0.05, "AdamW": 0.05}


class Surface:
    """A loss function of a point ``p = (x, y)`` with what it takes to draw it.

    ``function(p)`` returns a scalar tensor.  ``window`` is ``(x_min, x_max,
    y_min, y_max)``; ``minima`` lists the known minimum points (possibly none);
    ``min_value`` is the loss there (None when the surface has no minimum or it is
    unknown); ``learning_rates`` maps optimizer names to a default ``lr`` that
    suits this surface.

    Example::

        >>> bumpy = Surface("bumpy", lambda p: p[0] ** 2 + 3 * p[1] ** 2,
        ...                 window=(-2, 2, -2, 2), start=(1.5, 1.5), minima=[(0, 0)],
        ...                 min_value=0.0)
        >>> bumpy
        Surface('bumpy')
    """

    def __init__(self, name, function, *, window=(-2.0, 2.0, -2.0, 2.0), start=(-1.5, 1.5),
                 minima=(), min_value=None, learning_rates=None, options=None):
        self.name = name
        self.function = function
        self.window = tuple(float(v) for v in window)
        if len(self.window) != 4 or not (self.window[0] < self.window[1] and
                                           self.window[2] < self.window[3]):
            raise ValueError(f"window must be (x_min, x_max, y_min, y_max) with x_min < x_max "
                             f"and y_min < y_max, but got {tuple(window)}")
        self.start = _point(start, "start")
        self.minima = tuple(_point(m, "a minimum") for m in minima)
        self.min_value = None if min_value is None else float(min_value)
        self.learning_rates = dict(GENERIC_LEARNING_RATES, **(learning_rates or {}))
        # the knobs that made this surface (condition_number=...), for reprs and cache keys
        self.options = dict(options or {})

    def __call__(self, p):
        return self.function(p)

    @property
    def label(self):
        """The name with its options, e.g. ``quadratic(condition_number=10)``."""
        if not self.options:
            return self.name
        return self.name + "(" + ", ".join(f"{k}={v:g}" for k, v in self.options.items()) + ")"

    @property
    def key(self):
        """What determines the picture: equal keys draw the same contours."""
        return (self.name, tuple(self.options.items()), self.window, self.function)

    def __repr__(self):
        return f"Surface({self.label!r})"

    def values_on_grid(self, resolution=120):
        """``(xs, ys, values)``: the loss on a ``resolution x resolution`` grid over the window.

        One call of the function on a ``(2, rows, cols)`` tensor when the formula
        is elementwise; a function that is not (say it uses ``p @ A``) is called
        point by point instead, which is slower but gives the same picture.
        """
        x_min, x_max, y_min, y_max = self.window
        xs = np.linspace(x_min, x_max, resolution)
        ys = np.linspace(y_min, y_max, resolution)
        grid = np.stack(np.meshgrid(xs, ys))  # (2, rows, cols): grid[0] is x, grid[1] is y
        with learntorch.no_grad(), np.errstate(all="ignore"):
            try:
                values = _as_array(self.function(learntorch.tensor(grid)))
            except Exception:  # not elementwise: fall back to one point at a time
                values = None
            if values is None or values.shape != grid.shape[1:]:
                points = grid.reshape(2, -1).T
                values = np.array([_as_array(self.function(learntorch.tensor(point))).item()
                                   for point in points]).reshape(grid.shape[1:])
        return xs, ys, values


def _as_array(value):
    return value.numpy() if isinstance(value, learntorch.Tensor) else np.asarray(value)


def _point(value, what):
    point = tuple(float(v) for v in np.asarray(value, dtype=float).reshape(-1))
    if len(point) != 2:
        raise ValueError(f"{what} must be a point (x, y) of 2 numbers, but got {value!r}")
    return point


# ---------------------------------------------------------------------- the surfaces

def quadratic(condition_number=10.0, angle=0.0):
    """A bowl ``0.5 * (u**2 + condition_number * v**2)``, (u, v) being (x, y) turned by ``angle``.

    The curvatures along the bowl's axes are 1 and ``condition_number``: plain
    gradient descent needs ``lr < 2 / condition_number`` to stay stable, and then
    crawls along the flat axis -- the problem momentum was invented for.  Turning
    the bowl (``angle`` in degrees) hides its axes from optimizers that scale
    each coordinate separately (RMSprop, Adagrad, Adam).

    Example::

        >>> quadratic(condition_number=4).label
        'quadratic(condition_number=4)'
    """
    kappa = float(condition_number)
    if not kappa >= 1.0:
        raise ValueError(f"condition_number must be >= 1 (the ratio of the largest to the "
                         f"smallest curvature), but got {condition_number}")
    cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))

    def bowl(p):
        u = cos * p[0] + sin * p[1]
        v = cos * p[1] - sin * p[0]
        return 0.5 * (u * u + kappa * v * v)

    options = {"condition_number": kappa} if angle == 0 else \
        {"condition_number": kappa, "angle": float(angle)}
    # SGD is stable for lr < 2 / kappa; 1.5 / kappa zig-zags across the steep axis
    sgd_lr = 1.5 / kappa
    return Surface("quadratic", bowl, window=(-2.0, 2.0, -2.0, 2.0), start=(-1.8, 1.2),
                   minima=[(0.0, 0.0)], min_value=0.0, options=options,
                   learning_rates={"SGD": sgd_lr, "Momentum": 0.2 * sgd_lr,
                                   "Nesterov": 0.2 * sgd_lr, "RMSprop": 0.02, "Adagrad": 0.5,
                                   "Adam": 0.1, "AdamW": 0.1})


def rosenbrock():
    """Rosenbrock's banana valley ``(1 - x)**2 + 100 * (y - x**2)**2``, minimum 0 at (1, 1).

    Finding the valley is easy; following its curved, nearly flat floor to the
    minimum is what separates the optimizers.

    Example::

        >>> rosenbrock().minima
        ((1.0, 1.0),)
    """
    def banana(p):
        return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2

    return Surface("rosenbrock", banana, window=(-2.0, 2.0, -1.0, 3.0), start=(-1.5, 2.0),
                   minima=[(1.0, 1.0)], min_value=0.0,
                   learning_rates={"SGD": 1e-3, "Momentum": 5e-4, "Nesterov": 5e-4,
                                   "RMSprop": 0.02, "Adagrad": 1.0, "Adam": 0.1, "AdamW": 0.1})


def beale():
    """Beale's function: flat plateaus, steep walls at the edges, minimum 0 at (3, 0.5).

    Example::

        >>> beale().min_value
        0.0
    """
    def plateau(p):
        x, y = p[0], p[1]
        return ((1.5 - x + x * y) ** 2 + (2.25 - x + x * y ** 2) ** 2 +
                (2.625 - x + x * y ** 3) ** 2)

    return Surface("beale", plateau, window=(-4.5, 4.5, -4.5, 4.5), start=(1.0, 1.4),
                   minima=[(3.0, 0.5)], min_value=0.0,
                   learning_rates={"SGD": 1e-3, "Momentum": 2e-4, "Nesterov": 2e-4,
                                   "RMSprop": 0.01, "Adagrad": 0.5, "Adam": 0.05, "AdamW": 0.05})


# Himmelblau's four minima, to the precision a float64 Newton iteration reaches
HIMMELBLAU_MINIMA = ((3.0, 2.0), (-2.805118086952745, 3.131312518250573),
                     (-3.779310253377747, -3.283185991286170),
                     (3.584428340330492, -1.848126526964404))


def himmelblau():
    """Himmelblau's function ``(x**2 + y - 11)**2 + (x + y**2 - 7)**2``: four minima, all 0.

    Which minimum an optimizer ends in depends on where it starts and how it
    moves -- optimizers started together may part ways.

    Example::

        >>> len(himmelblau().minima)
        4
    """
    def four_valleys(p):
        return (p[0] ** 2 + p[1] - 11) ** 2 + (p[0] + p[1] ** 2 - 7) ** 2

    return Surface("himmelblau", four_valleys, window=(-5.0, 5.0, -5.0, 5.0), start=(-0.3, -0.9),
                   minima=HIMMELBLAU_MINIMA, min_value=0.0,
                   learning_rates={"SGD": 0.005, "Momentum": 0.002, "Nesterov": 0.002,
                                   "RMSprop": 0.05, "Adagrad": 1.0, "Adam": 0.1, "AdamW": 0.1})


def saddle():
    """A saddle at the origin between two minima: ``x**2 + y**4 / 4 - y**2 / 2``.

    Along x the origin is a valley, along y a ridge; the minima are (0, 1) and
    (0, -1), with loss -0.25.  Started just off the ridge, the gradient that pushes
    off it is tiny: watch which optimizers escape quickly.  (On the ridge itself,
    y = 0, the gradient along y is exactly zero and nothing ever escapes.)

    Example::

        >>> saddle().minima
        ((0.0, 1.0), (0.0, -1.0))
    """
    def ridge(p):
        return p[0] ** 2 + 0.25 * p[1] ** 4 - 0.5 * p[1] ** 2

    return Surface("saddle", ridge, window=(-2.0, 2.0, -1.6, 1.6), start=(-1.8, 0.001),
                   minima=[(0.0, 1.0), (0.0, -1.0)], min_value=-0.25,
                   learning_rates={"SGD": 0.05, "Momentum": 0.01, "Nesterov": 0.01,
                                   "RMSprop": 0.01, "Adagrad": 0.3, "Adam": 0.05, "AdamW": 0.05})


SURFACES = {"quadratic": quadratic, "rosenbrock": rosenbrock, "beale": beale,
            "himmelblau": himmelblau, "saddle": saddle}


def make_surface(surface, *, condition_number=None, window=None, start=None):
    """A ``Surface`` from a name in ``SURFACES``, a ``Surface``, or your own function of ``p``.

    Your own function gets the generic window (-2, 2) x (-2, 2) and start
    (-1.5, 1.5) unless you pass ``window`` / ``start``.  ``condition_number``
    only applies to the quadratic.

    Example::

        >>> make_surface(lambda p: (p[0] - 1) ** 2 + 10 * (p[1] - p[0] ** 2) ** 2).name
        'custom'
    """
    if isinstance(surface, Surface):
        made = surface
    elif isinstance(surface, str):
        if surface not in SURFACES:
            raise ValueError(f"unknown surface {surface!r}: choose one of "
                             f"{', '.join(map(repr, SURFACES))}, or pass your own function of "
                             f"a tensor p of shape (2,), e.g. lambda p: p[0]**2 + 10*p[1]**2")
        made = quadratic(condition_number if condition_number is not None else 10.0) \
            if surface == "quadratic" else SURFACES[surface]()
    elif callable(surface):
        name = getattr(surface, "__name__", "custom")
        made = Surface("custom" if name == "<lambda>" else name, surface)
    else:
        raise TypeError(f"surface must be a name ({', '.join(map(repr, SURFACES))}), a Surface "
                        f"or a function of a tensor p of shape (2,), but got "
                        f"{type(surface).__name__}")
    if condition_number is not None and made.name != "quadratic":
        raise ValueError(f"condition_number only applies to the 'quadratic' surface, not to "
                         f"{made.name!r}")
    if window is not None or start is not None:
        made = Surface(made.name, made.function, window=window or made.window,
                       start=made.start if start is None else start, minima=made.minima,
                       min_value=made.min_value, learning_rates=made.learning_rates,
                       options=made.options)
    return made
