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

    from hloviz.capture.releases.envs import EnvManager

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
    _long_files_first(config, items)


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


# --- make test's schedule: pytest-xdist, each file whole in one process (``--dist loadfile``) ---

#: Files whose tests each make everything they use (no module- or session-scoped fixture) and
#: take up to a minute apiece: their tests are handed to the processes one at a time, so that
#: such a file is shared by both processes instead of running alone at the end of the suite.
SPLIT_FILES = frozenset({"tests/test_explorer_blocks.py", "tests/test_hostile_growth.py", "tests/test_parser_lines.py",
                         "tests/test_fingerprints.py"})

#: The longest files, longest first (``--durations=0`` of ``make test``, per file, in
#: benchmarks/results/test_suite_time.txt). xdist hands files out in collection order, so a long
#: file met last keeps one process busy while the other has finished: they start first, and the
#: many short files fill in around them. Other files follow, those with ``slow`` tests first.
FIRST_FILES = (
    "tests/test_versions_real.py",
    "tests/test_explorer_blocks.py",
    "tests/test_explorer.py",
    "tests/test_layer_kernels_agree.py",
    "tests/test_explorer_pairs.py",
    "tests/test_parser_lines.py",
    "tests/test_memory.py",
    "tests/test_hostile_growth.py",
    "tests/test_fuzz.py",
    "tests/test_show_passes.py",
    "tests/test_parser_attributes.py",
    "tests/test_user_code_containment.py",
    "tests/test_loops_samples.py",
    "tests/test_readme_passes.py",
    "tests/test_linear_algorithms.py",
    "tests/test_fingerprints.py",
    "tests/test_capture_child_output.py",
    "tests/test_safety_captures.py",
)


def _schedule_rank(item) -> tuple[int, int]:
    file = item.nodeid.split("::", 1)[0]
    if file in FIRST_FILES:
        return (0, FIRST_FILES.index(file))
    return (1, 0 if item.get_closest_marker("slow") else 1)


def _long_files_first(config, items) -> None:
    """In an xdist worker: long files first (see FIRST_FILES), each file's tests kept together."""
    if not hasattr(config, "workerinput"):
        return  # one process: the files in their usual order
    rank: dict[str, tuple[int, int]] = {}
    for item in items:
        file = item.nodeid.split("::", 1)[0]
        rank[file] = min(rank.get(file, (9, 9)), _schedule_rank(item))
    items.sort(key=lambda item: rank[item.nodeid.split("::", 1)[0]])  # stable: a file's order kept


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` as xdist does it, except SPLIT_FILES (one test at a time) and the order:
    the collection's (long files first) instead of xdist's (files with the most tests first)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesLongestFirst(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return nodeid if file in SPLIT_FILES else file

    config.option.loadscopereorder = False
    return FilesLongestFirst(config, log)


# --- one headless Chromium per test file ---------------------------------------------------------


@pytest.fixture(scope="module")
def _file_browser():
    from .browser import chromium

    with chromium() as launched:
        yield launched


@pytest.fixture
def browser(_file_browser):
    """A Chromium launched once for the test file (a launch costs seconds on a loaded machine);
    each test's pages live in browser contexts of their own (``open_page`` makes one), closed
    when the test ends, so no cookie, storage or page is shared between tests."""
    yield _file_browser
    for context in list(_file_browser.contexts):
        context.close()
