"""ConvExplorer.on_model: filters are the layer's weight, feature maps the layer's own output,
and the receptive field is exactly the set of input pixels an output pixel depends on."""
import numpy as np
import pytest
import torch as real_torch

import learntorch as torch
from learntorch import nn
from widgets.conv_explorer import ConvExplorer
from widgets._feature_maps import receptive_field


def _cnn():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3, padding=2, dilation=2), nn.ReLU(), nn.AvgPool2d(2, stride=1),
                         nn.Conv2d(6, 5, 2, stride=2), nn.Flatten())


def _gradient_field(layers, pixel, size):
    # oracle: with every weight 1 and no nonlinearity, the input pixels with a nonzero gradient
    # of one output pixel are exactly the ones it depends on (real torch, its own layers)
    x = real_torch.ones(1, 1, *size, requires_grad=True)
    out = x
    for layer in layers:
        out = layer(out)
    out[0, 0][pixel].backward()
    rows, cols = np.nonzero(x.grad[0, 0].numpy())
    return (rows.min(), rows.max()), (cols.min(), cols.max())


@pytest.mark.parametrize("pixel", [(0, 0), (1, 2), (3, 3)])
def test_receptive_field_matches_the_gradient_of_real_torch(pixel):
    tn = real_torch.nn
    layers = [tn.Conv2d(1, 1, 3, padding=1, bias=False), tn.MaxPool2d(2),
              tn.Conv2d(1, 1, 3, padding=2, dilation=2, bias=False), tn.AvgPool2d(3, stride=2, padding=1),
              tn.Conv2d(1, 1, (2, 3), stride=(1, 2), bias=False)]
    for layer in layers:
        if isinstance(layer, tn.Conv2d):
            real_torch.nn.init.ones_(layer.weight)
    size = (20, 24)
    out_shape = real_torch.nn.Sequential(*layers)(real_torch.ones(1, 1, *size)).shape[-2:]
    pixel = (min(pixel[0], out_shape[0] - 1), min(pixel[1], out_shape[1] - 1))
    # MaxPool's gradient goes to one pixel per window: with equal inputs torch picks the first,
    # so the oracle uses average pooling (same geometry, gradient to the whole window)
    oracle = [tn.AvgPool2d(2) if isinstance(l, tn.MaxPool2d) else l for l in layers]
    oracle[3].count_include_pad = True
    assert receptive_field(layers, pixel, size) == _gradient_field(oracle, pixel, size)


def test_filters_and_feature_maps_are_the_models_own():
    model = _cnn()
    images = torch.rand(3, 1, 8, 8)
    maps = ConvExplorer.on_model(model, images, layer="3", channel=2, digit=1)
    assert maps.layer_names == ["0", "3", "6"]
    np.testing.assert_array_equal(maps.filters(), model[3].weight[2].detach().numpy())
    model.eval()
    with torch.no_grad():
        want = model[:4](images[1:2])[0, 2]
    np.testing.assert_allclose(maps.feature_map(), want.numpy(), rtol=1e-6)
    assert model.training is False                 # left as it was found (eval here)
    model.train()
    maps.select(layer="0", channel=3)
    assert model.training is True


def test_select_keeps_what_fits_and_names_what_does_not():
    maps = ConvExplorer.on_model(_cnn(), torch.rand(2, 1, 8, 8), layer="0", channel=3, pixel=(7, 7))
    maps.select(layer="6")                          # 5 channels, 1x1 map: channel 3 fits, pixel clamps
    assert (maps.channel, maps.pixel) == (3, (0, 0))
    assert maps.field() == ((0, 7), (0, 7))
    with pytest.raises(IndexError, match="layer '6' has 5 output channels"):
        maps.select(channel=5)
    with pytest.raises(KeyError, match=r"the layers are \['0', '3', '6'\]"):
        maps.select(layer="1")


def test_the_view_redraws_for_every_control():
    maps = ConvExplorer.on_model(_cnn(), torch.rand(2, 1, 8, 8))
    box = maps.view()
    controls = {c.description: c for row in box.children[:2] for c in row.children}
    picture = box.children[2]
    assert sorted(controls) == ["channel", "col", "digit", "layer", "row"]
    for name, value in [("layer", "3"), ("channel", 5), ("digit", 1), ("row", 3), ("col", 1)]:
        before = picture.value
        controls[name].value = value
        assert picture.value != before, name
    assert (maps.layer, maps.channel, maps.digit, maps.pixel) == ("3", 5, 1, (3, 1))
    assert "receptive field of pixel (3, 1)" in picture.value
