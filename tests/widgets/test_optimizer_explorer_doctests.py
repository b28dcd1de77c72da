"""The examples in the optimizer explorer's docstrings run and print what they say."""
import doctest
import importlib

import pytest

MODULES = ["widgets.optimizer_explorer", "widgets._surfaces", "widgets._momentum_phase",
           "widgets._optimizer_plots"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
