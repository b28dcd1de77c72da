"""The examples in the BackpropStepper's docstrings run and print what they say."""
import doctest
import importlib

import pytest

MODULES = ["widgets.backprop_stepper", "widgets._stepper_record", "widgets._stepper_rules",
           "widgets._stepper_text", "widgets._stepper_view"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
