"""torch._dynamo.exc's errors that learntorch.compile raises."""
from ..compiler.errors import Unsupported

__all__ = ["Unsupported"]
