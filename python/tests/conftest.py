"""The tests import the staged package (build/python, `ninja python`) unless redtune is
installed; tests/run.sh puts build/python first on PYTHONPATH."""
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAGED = os.path.join(TOP, "build", "python")
if os.path.isdir(os.path.join(STAGED, "redtune")) and STAGED not in sys.path:
    sys.path.insert(0, STAGED)
