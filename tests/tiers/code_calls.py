"""How often a function ran during a call: what the fast-tier tests use to show which code a
call went through (the reference forward, a backend method), not only what it returned."""
import sys


def calls_during(run, code):
    """How many times ``code`` (a function's code object) ran during ``run()``."""
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append(1)
                   if event == "call" and frame.f_code is code else None)
    try:
        run()
    finally:
        sys.setprofile(None)
    return len(calls)
