"""Every widget module's docstring examples run and print what they say, and every public
name of ``widgets`` has an example (learners read them in the chapters' help panes)."""
import doctest
import importlib
import pkgutil

import pytest

import widgets

MODULES = sorted(f"widgets.{m.name}" for m in pkgutil.iter_modules(widgets.__path__))
# helpers with nothing worth showing on their own: their callers' examples cover them
WITHOUT_EXAMPLES = {"widgets._base", "widgets._svg_grid"}


def test_every_widget_module_is_checked():
    assert "widgets.graph" in MODULES and len(MODULES) >= 15


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, name
    if name not in WITHOUT_EXAMPLES:
        assert result.attempted > 0, f"{name} has no docstring examples"


@pytest.mark.parametrize("name", widgets.__all__)
def test_every_public_name_has_an_example(name):
    assert ">>>" in (getattr(widgets, name).__doc__ or ""), f"widgets.{name} has no example"
