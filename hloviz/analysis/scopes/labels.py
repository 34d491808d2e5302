"""The names users know scopes by: a tree in, the same tree labelled out.

In: a scope tree just built (each scope's ``label`` its name as the op names wrote it) and, from a
TensorFlow capture, the Keras layer of each scope (``info["layer_scopes"]``). Out: the same tree,
each scope labelled by its Keras layer name: guessed from the op names (``block_0_1`` →
``block_0``, TensorFlow's re-entry suffix taken off unless two siblings would then share one
label), then overridden by what the capture recorded.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..opnames import keras_layer_name
from .scope import Scope

__all__ = ["label_scopes"]


def label_scopes(root: Scope, layers: Mapping[str, str]) -> None:
    """Label scopes by their Keras layer names: guessed from the op names (TF only), then
    overridden by what the capture recorded (``layers``: scope path → layer path)."""
    if not any(c.name.startswith(("jit(", "pjit(")) for c in root.children):  # Keras runs on TF only
        for s in root.walk():
            _keras_labels(s)
    for path, layer in layers.items():  # what the capture knows beats the guess
        s = _find_path(root, path)
        if s is not None and s.kind == "scope":
            s.label = layer.rsplit("/", 1)[-1]


def _find_path(root: Scope, path: str) -> Scope | None:
    s: Scope | None = root
    for part in path.split("/"):
        s = s.child(part) if s is not None else None
    return s


def _keras_labels(parent: Scope) -> None:
    """Label the children of ``parent`` by their Keras layer names (``block_0_1`` → ``block_0``),
    each one whose label no sibling would share: a layer called twice (``shared_embed_1``,
    ``shared_embed_3``) keeps its scopes' names, and its siblings still lose their suffix
    (``cross_attention_1`` → ``cross_attention``; all of them kept it, beside a shared embedding)."""
    kids = [c for c in parent.children if c.kind == "scope"]
    names = {c.name for c in parent.children}
    labels = [keras_layer_name(c.name, names) for c in kids]
    shared = {label for label in labels if labels.count(label) > 1}
    for c, label in zip(kids, labels):
        if label not in shared:
            c.label = label
