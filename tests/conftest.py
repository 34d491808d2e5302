"""Shared fixtures and the dependency markers.

Tests marked ``requires_tf`` / ``requires_jax`` / ``requires_dot`` / ``requires_chromium`` are
skipped when that dependency is missing, so the pure parts of hloviz test fast anywhere.
``make test`` installs all of them, so nothing is skipped there.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance" / "xla"


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


_AVAILABLE = {
    "requires_tf": _have("tensorflow"),
    "requires_jax": _have("jax"),
    "requires_dot": shutil.which("dot") is not None,
    "requires_chromium": any(shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")),
}


def _network_or_cached_tf() -> bool:
    """``requires_network``: the package index answers, or the TF 2.17/2.21 environments exist."""
    import socket

    from hloviz.capture.envs import EnvManager

    manager = EnvManager()
    if all(manager.find("tensorflow", v) is not None for v in ("2.17", "2.21")):
        return True
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


def pytest_configure(config):
    """Ctrl-C as in a terminal, however the suite was started.

    A shell without job control starts a background job (``make test > log &`` in a script, a CI
    step run in the background) with SIGINT ignored, and an ignored signal stays ignored in every
    process started from there: the tests that press Ctrl-C on hloviz (in this process, or a
    ``python -m hloviz`` child) then see nothing happen and fail, on any machine, loaded or not.
    Python's own handler here makes this process and its children take SIGINT as a terminal's
    Ctrl-C; a background job gets no Ctrl-C from the terminal anyway, so nothing else changes.
    """
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker, ok in _AVAILABLE.items():
            if not ok and item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=f"{marker}: dependency not installed"))
    if any(item.get_closest_marker("requires_network") for item in items) and not _network_or_cached_tf():
        for item in items:
            if item.get_closest_marker("requires_network"):
                item.add_marker(pytest.mark.skip(reason="requires_network: the package index cannot be reached"))


@pytest.fixture
def root() -> Path:
    return ROOT


def restore_default_sigint() -> None:
    """``preexec_fn`` for a child that a test will Ctrl-C: give it Python's usual SIGINT.

    A process started with SIGINT ignored (``nohup make test``, CI runners that start jobs in
    the background) passes the ignore on to its children, and a Python child then never raises
    KeyboardInterrupt; restoring the default lets the test's SIGINT reach it as a Ctrl-C would.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
