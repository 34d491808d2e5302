"""Fingerprint of everything the parser builds, for checking that a speed-up changes nothing.

    python benchmarks/parse_identity.py OUT.txt [EXTRA.hlo ...]    # before the change
    python benchmarks/parse_identity.py AFTER.txt [EXTRA.hlo ...]  # after; then diff the two

Parses every ``.hlo`` and ``.hlo.gz`` file under ``samples/``, ``tests/`` and ``../shared`` (and
any files named on the command line, such as the large benchmark module) and writes one line per
file: a SHA-256 over every computation's name, declared signature and root, and every
instruction's name, opcode, shape, operands, attributes (in text order), metadata, literal,
parameter number, line, called computations (by attribute) and control predecessors — or the
error message for a file the parser rejects. Two runs agree line for line when the parser built
the same modules and reported the same errors. Nothing here is timed.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import hloviz
from hloviz.errors import HlovizError

ROOTS = (Path("samples"), Path("tests"), Path("../shared"))


def fingerprint(path: Path) -> str:
    """The SHA-256 of what the parser makes of ``path``, or ``ERROR <message>``."""
    try:
        module = hloviz.parse_file(path)
    except HlovizError as err:
        return "ERROR " + str(err)[:300]
    h = hashlib.sha256()
    for c in module.computations:
        try:
            signature = repr(c.declared_signature)
        except HlovizError as err:
            signature = "ERROR " + str(err)[:300]
        h.update(f"C {c.name} {signature} root={c.root.name if c.root else None}\n".encode())
        for i in c.instructions:
            h.update(repr((
                i.name, i.opcode, str(i.shape), [o.name for o in i.operands], list(i.attributes.items()),
                repr(i.metadata), i.literal, i.parameter_number, i.line, [x.name for x in i.called_computations],
                {k: [x.name for x in v] for k, v in i.calls_by_attribute.items()},
                [x.name for x in i.control_predecessors],
            )).encode())
    return h.hexdigest()


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    extra = [Path(a) for a in argv[1:]]
    files = extra + sorted(p for root in ROOTS if root.is_dir() for p in root.rglob("*")
                           if p.name.endswith((".hlo", ".hlo.gz")) and p.is_file())
    Path(argv[0]).write_text("".join(f"{f}\t{fingerprint(f)}\n" for f in files))
    print(f"{len(files)} files fingerprinted into {argv[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
