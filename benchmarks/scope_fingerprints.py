"""Fingerprints of what the analysis answers, to compare code before and after a change that
must not change them (issue 20's speed-ups of the scope tree).

For every capture under ``samples/captures`` (pre and post; plain, and with the capture's
parameter names and layer scopes) and the 300k-instruction module in ``build/bench/`` (if made):
a hash of the scope tree (every scope's path, name, label, kind, depth, instructions, phases,
kernels, kernels by phase, paths as written), of every calling instruction's layers
(``layers_with_phases`` and ``layers_of``) and of the update and optimizer targets.

Run: ``python benchmarks/scope_fingerprints.py ROOT OUT.json [CAPTURE ... | big]``, ``ROOT`` the
checkout to import (``.`` for this one, a copy of the old code for "before"); then diff the files.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _read(folder: Path, stage: str) -> str | None:
    plain = folder / f"{stage}.hlo"
    if plain.exists():
        return plain.read_text()
    packed = folder / f"{stage}.hlo.gz"
    return gzip.decompress(packed.read_bytes()).decode() if packed.exists() else None


def _tree(tree, h) -> None:
    for s in tree.walk():
        h.update(repr((s.path, s.name, s.label, s.kind, s.depth, [i.name for i in s.instructions],
                       sorted(s.phases.items()), s.kernels, sorted(s.kernels_by_phase.items()),
                       sorted(s.written_as))).encode())
    h.update(repr(sorted((k, [s.path for s in v]) for k, v in tree._kernel_scopes.items())).encode())


def _kernels(tree, h) -> None:
    for inst in tree.module.instructions():
        if inst.called_computations:
            h.update(repr((inst.name, [(s.path, sorted(p)) for s, p in tree.layers_with_phases(inst)],
                           [s.path for s in tree.layers_of(inst)])).encode())


def _updates(tree, h) -> None:
    from hloviz.analysis.updates import optimizer_targets, update_targets

    h.update(repr(sorted((i.name, s.path if s else None) for i, s in update_targets(tree).items())).encode())
    h.update(repr(sorted(optimizer_targets(tree).items())).encode())


def _fingerprints(name: str, tree) -> dict[str, str]:
    out = {}
    parts: tuple[tuple[str, Callable], ...] = (("tree", _tree), ("kern", _kernels), ("upd", _updates))
    for part, fn in parts:
        h = hashlib.sha256()
        fn(tree, h)
        out[f"{name}/{part}"] = h.hexdigest()[:16]
    return out


def main(argv: list[str]) -> int:
    root, out_path, only = Path(argv[0]).resolve(), Path(argv[1]), argv[2:]
    sys.path.insert(0, str(root))
    import hloviz
    from hloviz.analysis.provenance import parameter_names
    from hloviz.analysis.scopes import build_scope_tree

    res: dict[str, str] = {}
    for folder in sorted((HERE / "samples" / "captures").iterdir()):
        if not folder.is_dir() or (only and folder.name not in only):
            continue
        info_path = folder / "capture.json"
        info = json.loads(info_path.read_text()) if info_path.exists() else None
        for stage in ("pre", "post"):
            text = _read(folder, stage)
            if text is None:
                continue
            module = hloviz.parse(text)
            res.update(_fingerprints(f"{folder.name}/{stage}/plain", build_scope_tree(module, stage=stage)))
            if info is not None:
                tree = build_scope_tree(module, stage=stage, parameter_names=parameter_names(module, info),
                                        layers=info.get("layer_scopes"))
                res.update(_fingerprints(f"{folder.name}/{stage}/named", tree))
    big = HERE / "build" / "bench" / "transformer-llama-L250-w64.hlo"
    if big.exists() and (not only or "big" in only):
        module = hloviz.parse(big.read_text())
        res.update(_fingerprints("big/pre", build_scope_tree(module, stage="pre")))
    out_path.write_text(json.dumps(res, indent=1, sort_keys=True))
    print(f"{len(res)} fingerprints in {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
