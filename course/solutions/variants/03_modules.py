"""Learner variants of chapter 03 (modules): 03.1 Linear from scratch, 03.2 an MLP made of
modules.  See course/variants.py for the format."""
from course.variants import correct, edited, mistake

# A right answer to the MLP exercise; three mistakes below are this answer with a line wrong.
LAYER_LIST = """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        layers = []
        for n_in, n_out in zip(sizes, sizes[1:]):
            layers += [nn.Linear(n_in, n_out), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x):
        return self.net(x.reshape(x.shape[0], -1))
"""

# the parts of MyLinear that the mistakes below keep right, so each shows one mistake only
_FORWARD = """
    def forward(self, x):
        out = x @ self.weight.T
        return out if self.bias is None else out + self.bias
"""


def _linear(init, forward=_FORWARD):
    return ("class MyLinear(nn.Module):\n"
            "    def __init__(self, in_features, out_features, bias=True):\n"
            "        super().__init__()\n"
            "        self.in_features, self.out_features = in_features, out_features\n"
            + init + forward)


VARIANTS = {
    "03.1": [
        correct("PyTorch's own recipe: kaiming_uniform_ with a = sqrt(5); F.linear", """
            class MyLinear(nn.Module):
                def __init__(self, in_features, out_features, bias=True):
                    super().__init__()
                    self.in_features, self.out_features = in_features, out_features
                    self.weight = nn.Parameter(torch.empty(out_features, in_features))
                    nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
                    if bias:
                        bound = 1 / math.sqrt(in_features)
                        self.bias = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
                    else:
                        self.register_parameter("bias", None)

                def forward(self, x):
                    return F.linear(x, self.weight, self.bias)
        """),
        correct("torch.rand scaled to the range; bias None as a plain attribute; matmul", """
            class MyLinear(nn.Module):
                def __init__(self, in_features, out_features, bias=True):
                    super().__init__()
                    self.in_features = in_features
                    self.out_features = out_features
                    bound = in_features ** -0.5
                    self.weight = nn.Parameter(torch.rand(out_features, in_features) * 2 * bound - bound)
                    self.bias = nn.Parameter(torch.rand(out_features) * 2 * bound - bound) if bias else None

                def forward(self, x):
                    y = x.matmul(self.weight.t())
                    if self.bias is not None:
                        y = y + self.bias
                    return y
        """),
        mistake("bias=False ignored: a bias all the same", _linear("""
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
"""), feedback=["MyLinear(4, 3, bias=False): named parameters", "['weight']"]),
        mistake("the weight's shape transposed: (in_features, out_features)", _linear("""
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(torch.empty(in_features, out_features).uniform_(-bound, bound))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        else:
            self.register_parameter("bias", None)
""", forward="""
    def forward(self, x):
        out = x @ self.weight
        return out if self.bias is None else out + self.bias
"""), feedback=["MyLinear(4, 3): named parameters", "('weight', (3, 4))"]),
        mistake("the bias registered before the weight", _linear("""
        bound = 1 / math.sqrt(in_features)
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        else:
            self.register_parameter("bias", None)
        self.weight = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
"""), feedback=["MyLinear(4, 3): named parameters"]),
        mistake("numpy's random numbers: torch.manual_seed does not repeat them", _linear("""
        import numpy as np
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(torch.tensor(
            np.random.uniform(-bound, bound, (out_features, in_features)), dtype=torch.float32))
        if bias:
            self.bias = nn.Parameter(torch.tensor(np.random.uniform(-bound, bound, out_features),
                                                  dtype=torch.float32))
        else:
            self.register_parameter("bias", None)
"""), feedback=["twice after torch.manual_seed(1)", "torch's random numbers"]),
        mistake("the bound 1/in_features instead of 1/sqrt(in_features)", _linear("""
        bound = 1 / in_features
        self.weight = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        else:
            self.register_parameter("bias", None)
"""), feedback=["values spread up to the bound 0.05"]),
        mistake("an nn.Linear inside", """
            class MyLinear(nn.Module):
                def __init__(self, in_features, out_features, bias=True):
                    super().__init__()
                    self.inner = nn.Linear(in_features, out_features, bias=bias)
                    self.weight, self.bias = self.inner.weight, self.inner.bias

                def forward(self, x):
                    return self.inner(x)
        """, feedback=["sub-modules", "not from nn.Linear"]),
        mistake("a subclass of nn.Linear", """
            class MyLinear(nn.Linear):
                pass
        """, feedback=["MyLinear is an nn.Linear", "build it from nn.Parameter"]),
    ],
    "03.2": [
        correct("layers added to an empty Sequential with add_module", """
            class MLP(nn.Module):
                def __init__(self, sizes):
                    super().__init__()
                    self.net = nn.Sequential()
                    position = 0
                    for k in range(len(sizes) - 1):
                        self.net.add_module(str(position), nn.Linear(sizes[k], sizes[k + 1]))
                        position += 1
                        if k < len(sizes) - 2:
                            self.net.add_module(str(position), nn.ReLU())
                            position += 1

                def forward(self, x):
                    return self.net(torch.flatten(x, start_dim=1))
        """),
        correct("a list with a ReLU after each Linear, the last one dropped; reshape", LAYER_LIST),
        mistake("a ReLU after the last Linear too", edited(
            LAYER_LIST, ("nn.Sequential(*layers[:-1])", "nn.Sequential(*layers)")),
                feedback=["MLP([64, 32, 10])(x) against Linear -> ReLU -> Linear", "a ReLU after the last Linear?"]),
        mistake("no flatten: images do not go in", edited(
            LAYER_LIST, ("self.net(x.reshape(x.shape[0], -1))", "self.net(x)")),
                raises="RuntimeError", feedback=["input shape [3, 1, 8, 8]", "in_features (64"]),
        mistake("the layers in an nn.ModuleList, called in a loop", edited(
            LAYER_LIST, ("nn.Sequential(*layers[:-1])", "nn.ModuleList(layers[:-1])"),
            ("        return self.net(x.reshape(x.shape[0], -1))",
             "        x = x.flatten(1)\n        for layer in self.net:\n            x = layer(x)\n"
             "        return x")),
                feedback=["MLP([8, 16, 16, 3]).net is an nn.Sequential"]),
        mistake("no ReLU at all", """
            class MLP(nn.Module):
                def __init__(self, sizes):
                    super().__init__()
                    self.net = nn.Sequential(*[nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])

                def forward(self, x):
                    return self.net(x.flatten(1))
        """, feedback=["state_dict(): keys and shapes", "net.2.weight"]),
    ],
}
