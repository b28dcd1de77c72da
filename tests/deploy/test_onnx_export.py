"""learntorch.onnx.export against ONNX Runtime: the exported model computes what learntorch does.

The oracle is ONNX Runtime running the written file: for the digits MLP and CNN of the
chapters (examples/train_digits.py) and a CNN with batch norm, on 100 random inputs and
on batch sizes the example never had; and for each op the exporter translates.  onnx and
onnxruntime are the `deploy` extra, which the test command installs.
"""
import importlib.util
import inspect
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import learntorch
from learntorch import nn
from learntorch.onnx import TrainingMode
from oracle import require_torch

onnx = pytest.importorskip("onnx", reason="the deploy extra is not installed: pip install "
                           "'learntorch[deploy]' (make test installs it)")
ort = pytest.importorskip("onnxruntime", reason="the deploy extra is not installed: pip "
                          "install 'learntorch[deploy]'")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def digits_model(name):
    """The MLP or CNN exactly as examples/train_digits.py (and the chapters) build them."""
    spec = importlib.util.spec_from_file_location("train_digits_for_export", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_model(name)


def cnn_with_batch_norm():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1, stride=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(), nn.Linear(32 * 4 * 4, 10))


def with_trained_statistics(model):
    """Batch norm with running statistics that are not the initial 0/1 (a few train steps)."""
    model.train()
    with learntorch.no_grad():
        for _ in range(3):
            model(learntorch.randn(32, 1, 8, 8) * 2 + 0.5)
    return model.eval()


def session(program_or_bytes):
    data = (program_or_bytes if isinstance(program_or_bytes, bytes)
            else program_or_bytes.model_proto.SerializeToString())
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def export_bytes(model, args, **kwargs):
    buf = io.BytesIO()
    learntorch.onnx.export(model, args, buf, **kwargs)
    return buf.getvalue()


def max_difference(model, sess, x):
    with learntorch.no_grad():
        expected = model(x).numpy()
    got = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
    assert got.shape == expected.shape
    return float(np.abs(got - expected).max())


# ---------------------------------------------------------------- the chapters' models
@pytest.mark.parametrize("make", [lambda: digits_model("mlp"), lambda: digits_model("cnn"),
                                  lambda: with_trained_statistics(cnn_with_batch_norm())],
                         ids=["digits-mlp", "digits-cnn", "cnn-batch-norm"])
def test_exported_models_match_learntorch_within_1e_5_on_100_inputs_and_any_batch(make):
    model = make().eval()
    data = export_bytes(model, learntorch.randn(64, 1, 8, 8), input_names=["image"],
                        output_names=["logits"],
                        dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto, full_check=True)
    sess = session(data)
    assert max_difference(model, sess, learntorch.randn(100, 1, 8, 8)) < 1e-5  # 100 inputs
    for batch in (1, 7, 256):                                                # not the example's
        assert max_difference(model, sess, learntorch.randn(batch, 1, 8, 8)) < 1e-5
    assert [d.dim_param for d in proto.graph.input[0].type.tensor_type.shape.dim] == \
        ["batch", "", "", ""]


def test_parameters_are_initializers_named_by_their_module_paths():
    model = with_trained_statistics(cnn_with_batch_norm())
    proto = learntorch.onnx.export(model, learntorch.randn(2, 1, 8, 8)).model_proto
    initializers = {t.name: onnx.numpy_helper.to_array(t) for t in proto.graph.initializer}
    state = model.state_dict()
    used = {k for k in state if not k.endswith("num_batches_tracked")}  # eval never reads it
    assert set(initializers) == used
    for name, array in initializers.items():
        np.testing.assert_array_equal(array, state[name].numpy())


def test_the_graph_uses_the_onnx_ops_a_reader_expects():
    proto = learntorch.onnx.export(with_trained_statistics(cnn_with_batch_norm()),
                                   learntorch.randn(2, 1, 8, 8)).model_proto
    assert [n.op_type for n in proto.graph.node] == [
        "Conv", "BatchNormalization", "Relu", "Conv", "BatchNormalization", "Relu", "MaxPool",
        "Flatten", "Gemm"]  # dropout: eval mode, no node


@pytest.mark.parametrize("opset", [13, 17, 18, 20, 21])
def test_every_supported_opset_gives_the_same_outputs(opset):
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.GELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 3), nn.Tanh(), nn.LayerNorm(3) if opset >= 17 else
                          nn.Identity(), nn.Softmax(dim=1)).eval()
    x = learntorch.randn(5, 1, 8, 8)
    data = export_bytes(model, x, opset_version=opset)
    assert onnx.load_from_string(data).opset_import[0].version == opset
    assert max_difference(model, session(data), x) < 1e-5


# ---------------------------------------------------------------- every op it translates
class Fn(nn.Module):
    """A function as a module, to export it."""

    def __init__(self, fn, *children):
        super().__init__()
        self.fn = fn
        self.children_ = nn.ModuleList(children)

    def forward(self, *xs):
        return self.fn(*xs)


F = nn.functional
OPS = {
    "conv-stride-dilation": (nn.Conv2d(3, 4, 3, stride=2, dilation=2, padding=2), (2, 3, 11, 9)),
    "conv-groups": (nn.Conv2d(4, 6, 3, groups=2, padding=1, bias=False), (2, 4, 6, 6)),
    "conv-same-even": (nn.Conv2d(2, 3, 4, padding="same"), (1, 2, 7, 7)),
    "conv1d": (nn.Conv1d(3, 5, 3, stride=2, padding=1), (2, 3, 10)),
    "conv-transpose": (nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                          groups=2, dilation=(1, 2)), (2, 4, 5, 4)),
    "conv-transpose1d": (nn.ConvTranspose1d(3, 2, 4, stride=3, bias=False), (2, 3, 5)),
    "maxpool-pad-stride": (nn.MaxPool2d(3, stride=2, padding=1), (2, 3, 9, 9)),
    "maxpool-dilation": (nn.MaxPool2d(2, dilation=2), (1, 2, 9, 9)),
    "maxpool-ceil": (nn.MaxPool2d(2, ceil_mode=True), (1, 2, 7, 7)),
    "maxpool-unbatched": (nn.MaxPool2d(2), (3, 6, 6)),
    "avgpool": (nn.AvgPool2d(2), (2, 3, 8, 8)),
    "avgpool-pad-include": (nn.AvgPool2d(3, stride=2, padding=1), (2, 3, 9, 9)),
    "avgpool-pad-exclude": (nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
                            (2, 3, 9, 9)),
    "avgpool-ceil-exclude": (nn.AvgPool2d(2, ceil_mode=True, count_include_pad=False),
                             (1, 2, 7, 7)),
    "avgpool-divisor": (nn.AvgPool2d(2, divisor_override=3), (1, 2, 6, 6)),
    "adaptive-global": (nn.AdaptiveAvgPool2d(1), (2, 3, 5, 7)),
    "adaptive-even": (nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 4, 9)),
    "adaptive-uneven": (nn.AdaptiveAvgPool2d(3), (2, 3, 7, 5)),
    "batchnorm1d": (nn.BatchNorm1d(5), (4, 5)),
    "batchnorm-no-affine": (nn.BatchNorm2d(3, affine=False), (2, 3, 4, 4)),
    "layernorm": (nn.LayerNorm((4, 5)), (2, 3, 4, 5)),
    "linear-3d": (nn.Linear(5, 3), (2, 4, 5)),
    "linear-no-bias": (nn.Linear(5, 3, bias=False), (4, 5)),
    "relu-tanh-sigmoid": (nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid()), (3, 4)),
    "gelu": (nn.GELU(), (3, 4)),
    "gelu-tanh": (nn.GELU(approximate="tanh"), (3, 4)),
    "silu-leaky": (nn.Sequential(nn.SiLU(), nn.LeakyReLU(0.2)), (3, 4)),
    "softmax-logsoftmax": (Fn(lambda x: x.softmax(0) + F.log_softmax(x, dim=-1)), (3, 4)),
    "softplus": (Fn(lambda x: F.softplus(x * 10, beta=2, threshold=5)), (3, 4)),
    "arithmetic": (Fn(lambda x: (x + 1) * 2 - x / 3 + 2 ** x - (1 - x) + x ** 2), (3, 4)),
    "broadcasting": (Fn(lambda x, y: x * y + y - x / (y.abs() + 1), ), ((3, 4), (4,))),
    "unary": (Fn(lambda x: x.exp() + (x.abs() + 1).log() + (x.abs() + 1).sqrt()
                 + (x.abs() + 1).rsqrt() + x.sin() + x.cos() - x.neg() + x.floor()
                 + (x.abs() + 1).log2() + x.abs().log1p() + x.expm1() + x.erf()), (3, 4)),
    "clamp": (Fn(lambda x: x.clamp(-0.5, 0.5) + x.clamp(min=0) + x.clamp(max=0.2)), (3, 4)),
    "matmul-batched": (Fn(lambda a, b: a @ b), ((2, 3, 4), (2, 4, 5))),
    "shapes": (Fn(lambda x: x.permute(0, 2, 1).reshape(2, -1).unsqueeze(1).transpose(0, 2)
                  .squeeze(1).t()), (2, 3, 4)),
    "view-batch": (Fn(lambda x: x.view(x.size(0), 4, -1).sum(dim=2)), (6, 4, 2, 3)),
    "cat-stack": (Fn(lambda x: learntorch.cat([x, x * 2], dim=1) + learntorch.stack(
        [x, x], dim=1).reshape(3, 8)), (3, 4)),
    "slicing": (Fn(lambda x: x[:, 1:3, None] + x[0, None, :2, None] + x[..., -1:, None]),
                (3, 4)),
    "reductions": (Fn(lambda x: x.mean(dim=1) + x.sum(dim=(0, 1), keepdim=True).squeeze(0)
                      + x.amax(dim=1) - x.amin(1) + x.var(dim=1) + x.std(dim=1, keepdim=True)
                      .squeeze(1) + learntorch.logsumexp(x, dim=1)), (3, 4)),
    "max-dim": (Fn(lambda x: x.max(dim=1).values + x.max(dim=1).indices.float()), (3, 5)),
    "pad-expand": (Fn(lambda x: F.pad(x, (1, 2), value=0.5) + learntorch.zeros(3, 7)
                      + x.sum(1, keepdim=True).expand(3, 7)), (3, 4)),
    "to-dtype": (Fn(lambda x: x.double().sum(1) * 2), (3, 4)),
    "constant-tensor": (Fn(lambda x: x * learntorch.tensor([1.0, 2.0, 3.0, 4.0])), (3, 4)),
}


@pytest.mark.parametrize("name", OPS)
def test_each_translated_op_matches_onnx_runtime(name):
    model, shapes = OPS[name]
    model = with_statistics_if_any(model).eval()
    shapes = shapes if isinstance(shapes[0], tuple) else (shapes,)
    args = tuple(learntorch.randn(*s) for s in shapes)
    program = learntorch.onnx.export(model, args)
    onnx.checker.check_model(program.model_proto, full_check=True)
    args = tuple(learntorch.randn(*s) for s in shapes)  # other values than the example's
    with learntorch.no_grad():
        expected = model(*args).numpy()
    got = session(program).run(None, {i.name: a.numpy() for i, a in
                                      zip(session(program).get_inputs(), args)})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def with_statistics_if_any(model):
    """Batch norms get running statistics other than 0 and 1 (so that they are exercised)."""
    for m in model.modules():
        if isinstance(m, nn.modules.normalization._BatchNorm):
            m.running_mean.copy_(learntorch.randn(m.num_features))
            m.running_var.copy_(learntorch.rand(m.num_features) + 0.5)
    return model


def test_an_embedding_gathers_rows_for_integer_indices():
    model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 2)).eval()
    idx = learntorch.randint(0, 10, (5, 3))
    program = learntorch.onnx.export(model, idx, input_names=["tokens"])
    got = session(program).run(None, {"tokens": idx.numpy()})[0]
    np.testing.assert_allclose(got, model(idx).detach().numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- what it refuses
def test_an_op_it_cannot_export_is_named_with_its_module_and_a_fix():
    class Ranker(nn.Module):
        def __init__(self):
            super().__init__()
            self.score = nn.Linear(4, 4)
            self.rank = Fn(lambda x: x.cumsum(dim=1))

        def forward(self, x):
            return self.rank(self.score(x))

    with pytest.raises(learntorch.onnx.errors.UnsupportedOperatorError) as info:
        learntorch.onnx.export(Ranker(), learntorch.randn(2, 4))
    message = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert "Cumsum" in message and "module 'rank' (Fn)" in message
    assert "outside the exported model" in message and "Linear" in message  # the fix


def test_a_learners_own_function_is_refused_not_mistaken_for_the_engines():
    class Relu(learntorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clamp(min=0) * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    with pytest.raises(learntorch.onnx.errors.UnsupportedOperatorError, match="Relu"):
        learntorch.onnx.export(Fn(lambda x: Relu.apply(x)), learntorch.randn(3))


def test_max_pool_indices_are_refused_because_onnx_counts_them_differently():
    model = Fn(lambda x: F.max_pool2d(x, 2, return_indices=True)[1].float())
    with pytest.raises(learntorch.onnx.errors.UnsupportedOperatorError, match="indices"):
        learntorch.onnx.export(model, learntorch.randn(1, 1, 4, 4))


def test_training_mode_is_exported_only_where_it_is_deterministic():
    model = cnn_with_batch_norm().train()
    program = learntorch.onnx.export(model, learntorch.randn(4, 1, 8, 8))  # default: EVAL
    assert model.training  # the mode is put back
    assert "BatchNormalization" in [n.op_type for n in program.model_proto.graph.node]
    with pytest.raises(learntorch.onnx.OnnxExporterError, match="random numbers"):
        learntorch.onnx.export(model, learntorch.randn(4, 1, 8, 8),
                               training=TrainingMode.PRESERVE)   # dropout would draw masks
    no_dropout = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    with pytest.raises(learntorch.onnx.errors.UnsupportedOperatorError, match="model.eval"):
        learntorch.onnx.export(no_dropout, learntorch.randn(4, 1, 8, 8),
                               training=TrainingMode.TRAINING)
    assert model.training


def test_bad_arguments_are_refused_with_what_to_do():
    model = digits_model("mlp")
    x = learntorch.randn(2, 1, 8, 8)
    with pytest.raises(learntorch.onnx.OnnxExporterError, match="opset_version=9"):
        learntorch.onnx.export(model, x, opset_version=9)
    with pytest.raises(ValueError, match="neither"):
        learntorch.onnx.export(model, x, dynamic_axes={"x": {0: "batch"}})
    with pytest.raises(ValueError, match="axes"):
        learntorch.onnx.export(model, x, input_names=["x"], dynamic_axes={"x": {4: "b"}})
    with pytest.raises(ValueError, match="input_names"):
        learntorch.onnx.export(model, x, input_names=["a", "b"])
    with pytest.raises(TypeError, match="nn.Module"):
        learntorch.onnx.export(lambda x: x, x)


# ---------------------------------------------------------------- the API around it
def test_f_may_be_a_path_a_file_object_or_none(tmp_path):
    model = digits_model("mlp").eval()
    x = learntorch.randn(3, 1, 8, 8)
    path = tmp_path / "mlp.onnx"
    program = learntorch.onnx.export(model, (x,), path)
    from_path = path.read_bytes()
    assert from_path == export_bytes(model, x)
    assert learntorch.onnx.export(model, x, None).model_proto.SerializeToString() == from_path
    program.save(tmp_path / "again.onnx")
    assert (tmp_path / "again.onnx").read_bytes() == from_path
    [got] = program(x)                                      # runs ONNX Runtime
    np.testing.assert_allclose(got.numpy(), model(x).detach().numpy(), atol=1e-5)
    program.verify(x)


def test_several_inputs_and_outputs_keep_their_names_and_order():
    model = Fn(lambda a, b: (a + b, a * b, a))
    program = learntorch.onnx.export(model, (learntorch.randn(2), learntorch.randn(2)),
                                     input_names=["a", "b"], output_names=["sum", "product"])
    graph = program.model_proto.graph
    assert [i.name for i in graph.input] == ["a", "b"]
    assert [o.name for o in graph.output] == ["sum", "product", "output_2"]
    a, b = np.float32([1, 2]), np.float32([3, 4])
    s, p, same = session(program).run(None, {"a": a, "b": b})
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(p, a * b)
    np.testing.assert_array_equal(same, a)


def test_dynamic_axes_as_a_list_and_dynamic_shapes_name_the_dimensions_as_torch_does():
    model = digits_model("mlp")
    x = learntorch.randn(2, 1, 8, 8)

    def dims(program, which="input"):
        value = getattr(program.model_proto.graph, which)[0]
        return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]

    listed = learntorch.onnx.export(model, x, input_names=["image"],
                                    dynamic_axes={"image": [0]})
    assert dims(listed) == ["image_dynamic_axes_1", 1, 8, 8]
    shaped = learntorch.onnx.export(model, x, dynamic_shapes=({0: "batch"},))
    assert dims(shaped) == ["batch", 1, 8, 8]
    assert dims(shaped, "output") == ["batch", 10]   # followed through the graph
    with pytest.raises(ValueError, match="not both"):
        learntorch.onnx.export(model, x, dynamic_axes={"input": [0]},
                               dynamic_shapes=({0: "b"},))


def test_export_params_false_makes_the_parameters_inputs():
    model = digits_model("mlp")
    graph = learntorch.onnx.export(model, learntorch.randn(2, 1, 8, 8),
                                   export_params=False).model_proto.graph
    assert len(graph.initializer) == 0
    assert [i.name for i in graph.input] == ["input", "1.weight", "1.bias", "3.weight", "3.bias"]
    constant = Fn(lambda x: x * learntorch.tensor([2.0, 3.0]))   # made in forward: stays inside
    graph = learntorch.onnx.export(constant, learntorch.randn(2), export_params=False) \
        .model_proto.graph
    assert [i.name for i in graph.initializer] == ["_tensor_constant0"]
    assert [i.name for i in graph.input] == ["input_0"]    # forward(self, *xs): numbered


def test_forward_sees_is_in_onnx_export():
    seen = []
    model = Fn(lambda x: seen.append(learntorch.onnx.is_in_onnx_export()) or x * 2)
    learntorch.onnx.export(model, learntorch.randn(2))
    assert seen[0] is True and learntorch.onnx.is_in_onnx_export() is False


def test_export_takes_torchs_parameters():
    torch = require_torch()
    assert list(inspect.signature(learntorch.onnx.export).parameters) == \
        list(inspect.signature(torch.onnx.export).parameters)
    assert issubclass(learntorch.onnx.errors.UnsupportedOperatorError,
                      learntorch.onnx.OnnxExporterError)
    assert [m.name for m in learntorch.onnx.TrainingMode] == ["EVAL", "PRESERVE", "TRAINING"]


def test_importing_learntorch_does_not_import_onnx():
    code = "import sys, learntorch; print('onnx' in sys.modules, 'onnxruntime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]
