# heaptape -- `heaptape record --python`: PYTHONPATH puts this file first, so
# site imports it before the script runs. It starts the heaptape module on the
# tape (HEAPTAPE_PYTHON_OUTPUT), then undoes itself: the user's PYTHONPATH
# back, its own directory out of sys.path, and the sitecustomize it hides
# (Debian's) run in its place, so sys.argv, __main__ and sys.path are as
# without heaptape. See docs/PYTHON.md.
import os
import sys


def _heaptape_begin():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ
    old = env.pop("HEAPTAPE_PYTHONPATH", None)
    if old is None:
        env.pop("PYTHONPATH", None)
    else:
        env["PYTHONPATH"] = old
    try:
        import heaptape  # beside this file in build/, else on the default path
        heaptape._record()
    except Exception as e:  # the script runs anyway
        sys.stderr.write("heaptape: cannot record Python: %s\n" % e)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    for k in ("HEAPTAPE_PYTHON_OUTPUT", "HEAPTAPE_PYTHON_NATIVE"):
        env.pop(k, None)
    # the sitecustomize this file hides
    del sys.modules["sitecustomize"]
    try:
        import sitecustomize  # noqa: F401
    except ImportError as e:
        if e.name != "sitecustomize":
            raise


_heaptape_begin()
del _heaptape_begin
