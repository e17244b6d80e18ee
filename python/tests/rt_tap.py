"""pytest plugin (-p rt_tap): one TAP line per test into the file $REDTUNE_TAP, which
tests/run.sh counts with the C suite's lines ("ok N", "not ok N", "not ok N # SKIP")."""
import os

_out = None
_n = 0


def pytest_configure(config):
    global _out
    path = os.environ.get("REDTUNE_TAP")
    if path:
        _out = open(path, "a", encoding="utf-8")


def pytest_unconfigure(config):
    if _out:
        _out.close()


def _line(ok, name, skip=None):
    global _n
    if not _out:
        return
    _n += 1
    text = "%s %d - python: %s" % ("ok" if ok else "not ok", _n, name)
    if skip is not None:
        text += " # SKIP %s" % " ".join(str(skip).split())
    _out.write(text + "\n")
    _out.flush()


def pytest_collectreport(report):
    """A module skipped as a whole (pytest.importorskip) or one that does not import."""
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        _line(False, report.nodeid, skip=str(reason).replace("Skipped: ", ""))
    elif report.failed:
        _line(False, "%s (collection)" % report.nodeid)


def pytest_runtest_logreport(report):
    name = report.nodeid
    if report.skipped and report.when in ("setup", "call"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        _line(False, name, skip=str(reason).replace("Skipped: ", ""))
    elif report.when == "call":
        _line(report.passed, name)
    elif report.failed:   # a failed setup or teardown
        _line(False, "%s (%s)" % (name, report.when))
