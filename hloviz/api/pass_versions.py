"""The composition behind ``hloviz versions --passes``: which of XLA's passes differ between
releases for the same function (part of :mod:`hloviz.api`).

Each release's capture runs with XLA's per-pass dumps (in its managed environment, as
``hloviz versions`` captures), its history is read (:func:`hloviz.api.passes.read_pass_history`)
and each history is compared with the one before (:mod:`hloviz.analysis.passes.versions`). Dump
folders (or tar archives of them) made earlier can be compared instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..analysis.passes import PassHistory
from ..analysis.passes.versions import PassVersionDiff, compare_histories
from ..errors import InputError

__all__ = ["PassVersionsResult", "pass_versions"]


@dataclass(frozen=True)
class PassVersionsResult:
    """Each release's pass history (labelled) and the pass differences of consecutive ones."""

    histories: tuple[tuple[str, PassHistory], ...]
    diffs: tuple[PassVersionDiff, ...]

    def to_dict(self) -> dict[str, Any]:
        from ..analysis.passes.versions import effects

        return {"versions": [{"label": label, "module": h.module, "snapshots": len(h.steps),
                              "changed": len(h.changed_steps), "complete": h.complete, "problems": list(h.problems),
                              "passes": {k: e.to_dict() for k, e in effects(h).items()}}
                             for label, h in self.histories],
                "diffs": [d.to_dict() for d in self.diffs]}

    def to_text(self) -> str:
        head = [f"{label}: {len(h.steps)} snapshots, {len(h.changed_steps)} changed the module"
                + ("" if h.complete else f" (incomplete: {len(h.problems)} problem(s))") for label, h in self.histories]
        return "\n".join(head) + "\n\n" + "\n".join(d.to_text() for d in self.diffs)


def _read(path: Path, module: str | None, notify: Callable[[str], None] | None) -> PassHistory:
    from ..capture.dumps.pass_dump import extracted_archive, is_archive
    from .passes import read_pass_history

    if is_archive(path):
        with extracted_archive(path) as folder:
            return read_pass_history(folder, module=module, notify=notify).history
    if not os.path.isdir(path):
        raise InputError(f"{path} is neither a dump folder with per-pass snapshots nor a tar archive of one")
    return read_pass_history(path, module=module, notify=notify).history


def _label(path: Path) -> str:
    name = path.name
    for suffix in (".tar.gz", ".tar.xz", ".tar.bz2", ".tgz", ".tar"):
        name = name.removesuffix(suffix)
    return name


def pass_versions(target: str | None = None, *, tf: Sequence[str] = (), jax: Sequence[str] = (),
                  dumps: Sequence[str | Path] = (), args: Sequence[str] = (), device: str | None = None,
                  verbose: bool = False, module: str | None = None,
                  notify: Callable[[str], None] | None = None) -> PassVersionsResult:
    """Capture ``target`` with per-pass dumps under each ``tf`` (or ``jax``) release, or read
    ``dumps`` (dump folders or archives), in order; then compare consecutive histories."""
    from ..capture.dumps.pass_dump import pass_dump_capture
    from .passes import read_pass_history

    if tf and jax:
        raise InputError("give --tf or --jax versions, not both: one function runs under one framework")
    releases = [("tf", v) for v in tf] + [("jax", v) for v in jax]
    histories: list[tuple[str, PassHistory]] = []
    if releases:
        if dumps or not target:
            raise InputError("--passes with --tf/--jax needs one model.py:function TARGET")
        if len(releases) < 2:
            raise InputError("give at least two versions to compare, e.g. --tf 2.17 --tf 2.21")
        for key, version in releases:
            with pass_dump_capture(target, args=args, device=device, verbose=verbose, notify=notify,
                                   tf=version if key == "tf" else None, jax=version if key == "jax" else None
                                   ) as (cap, folder):
                post = cap.post_module()
                result = read_pass_history(folder, module=module, prefer=post.name if post is not None else None,
                                           info=cap.info, notify=notify)
                framework = "tensorflow" if key == "tf" else "jax"
                label = f"{'TF' if key == 'tf' else 'JAX'} {cap.info.get(framework) or version}"
                histories.append((label, result.history))
    else:
        if len(dumps) < 2:
            raise InputError("--passes compares two or more: a model.py:function with --tf/--jax versions, or dump "
                             "folders (or tar archives) holding per-pass snapshots")
        histories = [(_label(Path(d)), _read(Path(d), module, notify)) for d in dumps]
    diffs = tuple(compare_histories(a, b) for a, b in pairwise(histories))
    return PassVersionsResult(tuple(histories), diffs)
