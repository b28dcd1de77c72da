"""torch._dynamo.config's knobs that learntorch.compile reads (``learntorch._dynamo.config``
is this module: the compiler owns its settings, _dynamo only shows them under torch's name).

``recompile_limit`` -- how many cache entries (and new paths through graph breaks) one
compiled function makes before it warns and runs the rest of the calls that match no
entry eagerly: torch's default, 8.  ``cache_size_limit`` is its older name: setting either
sets both, as in torch.
"""
import sys
import types


class _Config(types.ModuleType):
    recompile_limit = 8
    accumulated_recompile_limit = 256
    fail_on_recompile_limit_hit = False

    @property
    def cache_size_limit(self):
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value):
        self.recompile_limit = value


sys.modules[__name__].__class__ = _Config
