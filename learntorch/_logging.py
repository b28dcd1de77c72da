"""``learntorch._logging.set_logs``: torch._logging's switch for the compiler's logs
(``recompiles``, ``graph_breaks``, ``output_code``, ``guards``); see learntorch/compiler/logs.py."""
from .compiler.logs import set_logs

__all__ = ["set_logs"]
