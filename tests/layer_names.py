"""The test oracle for clean layer names, written from the capture's own records (not hloviz's
naming code), shared by the kernel-table and scratch-model tests."""

from __future__ import annotations

import re
from collections.abc import Iterable


def shown(path: str, layers: dict[str, str], op_names: Iterable[str] = ()) -> str:
    """An op-name scope path by the names users know: each prefix's Keras layer as the capture
    recorded it (``layer_scopes``), else the segment less Keras' ``_N`` re-entry suffix — kept
    when an op name has the bare name beside it (TF's ``einsum`` and ``einsum_1`` are two scopes)."""
    beside = {tuple(n.removeprefix("gradient_tape/").split("/")[:-1]) for n in op_names}
    beside = {p[:k] for p in beside for k in range(1, len(p) + 1)}
    parts = path.split("/")
    out = []
    for k, seg in enumerate(parts):
        layer = layers.get("/".join(parts[:k + 1]))
        bare = re.sub(r"_\d+$", "", seg)
        keep = (*parts[:k], bare) in beside and bare != seg
        out.append(layer.rsplit("/", 1)[-1] if layer else seg if keep else bare)
    return "/".join(out)
