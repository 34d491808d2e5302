"""A newcomer can hold each module and each folder of ``hloviz/`` in their head.

Two limits, checked over every ``.py`` file under ``hloviz/`` (blank lines and docstrings count:
they are what a reader reads):

* a module has at most :data:`MAX_LINES` lines;
* a folder holds at most :data:`MAX_MODULES` modules (``.py`` files directly in it, ``__init__``
  included).

When one grows past them, split it **by concept**: each new module has one job and a docstring
saying what comes in, what goes out and why it is a module of its own; a private name (``_x``) is
never imported from another module (tests/test_render_shape.py checks that over the package).
:data:`KNOWN_LONG` lists modules allowed over the limit, each with its reason (none today); the
test fails on any other, and when a listed one is back under the limit (so the list only shrinks).
"""

from __future__ import annotations

from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hloviz"
MAX_LINES = 400
MAX_MODULES = 15

#: Modules still over :data:`MAX_LINES` (path relative to ``hloviz/``) and why they still stand.
KNOWN_LONG: dict[str, str] = {
}

#: Folders still over :data:`MAX_MODULES` and why.
KNOWN_CROWDED: dict[str, str] = {
}



def modules(package: Path = PACKAGE) -> dict[str, int]:
    """Every module → its number of lines."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        out[rel.as_posix()] = len(path.read_text(encoding="utf-8").splitlines())
    return out


def folders(package: Path = PACKAGE) -> dict[str, int]:
    """Every folder (``.`` is ``hloviz/`` itself) → its number of modules."""
    out: dict[str, int] = {}
    for rel in modules(package):
        folder = Path(rel).parent.as_posix()
        out[folder] = out.get(folder, 0) + 1
    return out


def too_long(package: Path = PACKAGE) -> dict[str, int]:
    return {m: n for m, n in modules(package).items() if n > MAX_LINES}


def too_crowded(package: Path = PACKAGE) -> dict[str, int]:
    return {f: n for f, n in folders(package).items() if n > MAX_MODULES}


def test_no_module_is_over_the_limit():
    found = too_long()
    new = {m: n for m, n in found.items() if m not in KNOWN_LONG}
    assert not new, (f"modules over {MAX_LINES} lines (split them by concept; see this test's "
                     f"docstring): {new}")
    shrunk = sorted(set(KNOWN_LONG) - set(found))
    assert not shrunk, f"back under {MAX_LINES} lines (or gone), so remove from KNOWN_LONG: {shrunk}"


def test_no_folder_holds_too_many_modules():
    found = too_crowded()
    new = {f: n for f, n in found.items() if f not in KNOWN_CROWDED}
    assert not new, (f"folders with over {MAX_MODULES} modules (group them into subpackages by "
                     f"concept): {new}")
    shrunk = sorted(set(KNOWN_CROWDED) - set(found))
    assert not shrunk, f"back under {MAX_MODULES} modules, so remove from KNOWN_CROWDED: {shrunk}"


@pytest.mark.parametrize("files, long, crowded", [
    ({"a.py": "x = 1\n" * MAX_LINES}, {}, {}),
    ({"a.py": "x = 1\n" * (MAX_LINES + 1)}, {"a.py": MAX_LINES + 1}, {}),
    ({f"pkg/m{i}.py": "" for i in range(MAX_MODULES)}, {}, {}),
    ({f"pkg/m{i}.py": "" for i in range(MAX_MODULES + 1)}, {}, {"pkg": MAX_MODULES + 1}),
    # a subfolder counts its own modules, not its parent's
    ({**{f"pkg/m{i}.py": "" for i in range(10)}, **{f"pkg/sub/m{i}.py": "" for i in range(10)}}, {}, {}),
])
def test_the_checker_counts_lines_and_modules(tmp_path, files, long, crowded):
    """The walk on a made-up package: one line over each limit is found, the exempt folder is not."""
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert too_long(tmp_path) == long
    assert too_crowded(tmp_path) == crowded


def test_the_known_lists_name_what_exists():
    for rel in KNOWN_LONG:
        assert (PACKAGE / rel).is_file(), rel
    for rel in KNOWN_CROWDED:
        assert (PACKAGE / rel).is_dir(), rel
