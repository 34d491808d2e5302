"""Blocks built alike, and the runs they repeat in (what a picture draws once as ``×N``).

In: a block's members and the arrows between them, each node labelled by what it is. Out: a
Weisfeiler–Lehman hash of the block's graph (:func:`structure_hash`, :func:`graph_hash`): equal
for blocks of the same ops wired the same way; and, over the hashes of neighbouring blocks, the
runs of equal ones (:func:`repeats`) or of equal groups of two or three (:func:`periodic`: a
transformer layer's attention block then MLP block). :mod:`.structure` folds the runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

__all__ = ["graph_hash", "periodic", "repeats", "structure_hash"]

#: How many answers :func:`structure_hash` remembers (then it starts over).
_KEPT = 4096


def structure_hash(members: Sequence[int], edges: Sequence[tuple[int, int]], label: Callable[[int], str],
                   iterations: int = 3) -> str:
    """A Weisfeiler–Lehman hash of the graph ``members`` induce on ``edges``, nodes labelled by
    ``label``: equal for blocks built the same way (the same ops wired the same way).

    Each round relabels a node by its label and the sorted labels of its operands and of its
    users (directed, as networkx's ``weisfeiler_lehman_graph_hash`` since 3.5), compressed with
    BLAKE2b so labels stay short; the hash is the digest of the sorted final labels. Written
    out rather than built on a networkx graph: hundreds of blocks of a big module are hashed.

    Remembered by the labels and the edges between positions: a big module's repeated layers
    are the same graph hundreds of times (a 250-layer transformer's blocks are hashed once
    each, not once per layer).
    """
    index = {m: i for i, m in enumerate(members)}
    labels = tuple(label(m) for m in members)
    pairs = []
    for a, b in edges:
        ia, ib = index.get(a), index.get(b)
        if ia is not None and ib is not None and ia != ib:
            pairs.append((ia, ib))
    return graph_hash(labels, tuple(pairs), iterations)


def graph_hash(labels: tuple[str, ...], pairs: tuple[tuple[int, int], ...], iterations: int = 3) -> str:
    """:func:`structure_hash` of nodes ``0 … len(labels) - 1`` labelled ``labels`` and the arrows
    ``pairs`` between them (no arrow from a node to itself), for a caller that has them so
    already: thousands of small blocks of a big module are hashed, and the translation to
    positions is the most of it."""
    key = (labels, pairs, iterations)
    known = _HASHES.get(key)
    if known is not None:
        return known
    succ: list[list[int]] = [[] for _ in labels]
    pred: list[list[int]] = [[] for _ in labels]
    for ia, ib in pairs:
        succ[ia].append(ib)
        pred[ib].append(ia)
    cur = [_digest(text) for text in labels]
    for _ in range(iterations):
        cur = [_digest(f"{cur[i]}<{','.join(sorted(cur[p] for p in pred[i]))}>{','.join(sorted(cur[s] for s in succ[i]))}")
               for i in range(len(labels))]
    out = _digest("|".join(sorted(cur)), 16)
    if len(_HASHES) >= _KEPT:
        _HASHES.clear()
    _HASHES[key] = out
    return out


#: :func:`structure_hash`'s answers by its inputs, at most :data:`_KEPT` of them.
_HASHES: dict[tuple, str] = {}


def _digest(text: str, size: int = 8) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=size).hexdigest()


def periodic(hashes: Sequence[str | None], *, periods: Sequence[int] = (2, 3), copies: int = 3) -> list[tuple[int, int, int]]:
    """Runs ``(start, period, count)`` where a group of ``period`` neighbours repeats ``count``
    (≥ ``copies``) times — a transformer layer is an attention block then an MLP block."""
    out = []
    i = 0
    while i < len(hashes):
        best = None
        for p in periods:
            if any(h is None for h in hashes[i:i + p]):
                continue
            j = i + p
            while j + p <= len(hashes) and list(hashes[j:j + p]) == list(hashes[i:i + p]):
                j += p
            count = (j - i) // p
            if count >= copies and (best is None or count * p > best[1] * best[2]):
                best = (i, p, count)
        if best is None:
            i += 1
            continue
        out.append(best)
        i = best[0] + best[1] * best[2]
    return out


def repeats(hashes: Sequence[str | None]) -> list[tuple[int, int]]:
    """Runs ``(start, count)`` of two or more neighbours with the same hash (None never repeats)."""
    out = []
    i = 0
    while i < len(hashes):
        j = i + 1
        while j < len(hashes) and hashes[i] is not None and hashes[j] == hashes[i]:
            j += 1
        if j - i >= 2:
            out.append((i, j - i))
        i = j
    return out
