"""Fingerprints of the pictures ``render`` draws, to compare code before and after a change that
must not change them (issue 20's speed-ups of the view: tree, blocks, repeats, stacking).

For every capture under ``samples/captures``: the SHA-256 of the DOT text of
``hloviz render CAPTURE --stage both -o x.dot`` (with ``--svg``, of the SVG ``-o x.svg`` draws:
what ``--wrap`` and the composition of laid-out parts change, which the DOT text, written
before any layout, does not show); and for each ``--big`` HLO file (the
300k-instruction module, ``benchmarks/_gen_transformer.py --layers 250 --arch llama``) the
SHA-256 of ``hloviz render FILE -o x.dot``. The command line runs in this process, as a user
runs it.

Run: ``python benchmarks/picture_fingerprints.py OUT.json [--big PATH.hlo ...] [--only NAME ...] [--svg]``;
run it before and after the change and diff the two files. The DOT fingerprints of every capture
are also a test (``tests/test_fingerprints.py`` against ``tests/golden/picture_fingerprints.json``);
after a change meant to alter pictures, ``python benchmarks/picture_fingerprints.py
tests/golden/picture_fingerprints.json`` writes the new ones (say why in the commit).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hloviz.cli import main as hloviz_main  # noqa: E402

CAPTURES = ROOT / "samples" / "captures"


def fingerprint(args: list[str], suffix: str = ".dot") -> str:
    """The SHA-256 of the file ``hloviz render ARGS -o x.dot`` (or ``x.svg``) writes (or of its error)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"x{suffix}"
        try:
            hloviz_main(["render", *args, "-o", str(out)])
        except SystemExit as exc:
            if exc.code:
                return f"exit {exc.code}"
        return hashlib.sha256(out.read_bytes()).hexdigest()


def captures() -> list[Path]:
    """The capture folders under ``samples/captures`` (``passes/`` holds dump archives, not a capture)."""
    return [f for f in sorted(CAPTURES.iterdir()) if f.is_dir() and (f / "capture.json").is_file()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--big", type=Path, action="append", default=[])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--svg", action="store_true", help="fingerprint the SVG drawn (laid out, wrapped) instead of the DOT")
    a = ap.parse_args(argv)
    jobs = [(f.name, [str(f), "--stage", "both"]) for f in captures() if a.only is None or f.name in a.only]
    jobs += [(p.name, [str(p)]) for p in a.big]
    found = {}
    for name, args in jobs:
        t0 = time.perf_counter()
        found[name] = fingerprint(args, ".svg" if a.svg else ".dot")
        print(f"{name:<28} {time.perf_counter() - t0:6.2f} s  {found[name][:16]}", flush=True)
    a.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
