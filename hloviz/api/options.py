"""Option objects for :func:`hloviz.api.show` and :func:`hloviz.api.render`.

The two functions share fourteen settings: six say how to get the HLO (:class:`CaptureOptions`)
and six how to draw it (:class:`DrawOptions`). A caller can pass them one by one as keywords,
as the CLI does, or build the objects once and pass them to both::

    from hloviz import api
    from hloviz.api.options import CaptureOptions, DrawOptions

    how = CaptureOptions(args=("f32[8,16]",))
    look = DrawOptions(budget=120, expand_chains=True)
    api.show("model.py:fn", "out/", capture=how, drawing=look)
    api.render("model.py:fn", "post.svg", capture=how, drawing=look)

Giving an object *and* one of its keywords with a non-default value is a ``TypeError``: which
one should win would be a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

__all__ = ["CaptureOptions", "DrawOptions"]


@dataclass(frozen=True)
class CaptureOptions:
    """How to get the HLO of a target (see :func:`hloviz.capture.load_target`).

    ``pre``/``post``: two HLO files instead of a target; ``args``: ``--arg`` specs of a live
    function; ``device``: where to compile it (``CPU:0``, ``GPU:0``); ``module``: which module
    of an XLA dump folder; ``verbose``: let TensorFlow's and JAX's own logging through.
    """

    pre: str | Path | None = None
    post: str | Path | None = None
    args: tuple[str, ...] = ()
    device: str | None = None
    module: str | None = None
    verbose: bool = False

    def keywords(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class DrawOptions:
    """How to draw a module (see :mod:`hloviz.render.views`).

    ``computation``: draw this computation instead of the entry; ``focus``: an instruction to
    centre on, with its neighbours ``radius`` steps away; ``expand_chains``: draw elementwise
    chains op by op; ``budget``: the most nodes per picture before collapsing (None: the
    command's default — ``render``'s overview of a whole module, 300 elsewhere); ``timeout``:
    seconds Graphviz may take before a coarser view is drawn; ``scope``: draw one scope (a layer
    or block) open; ``depth``: open no scope deeper; ``color_by``: ``kernel``, ``flops`` or
    ``bytes`` (the kernels' colours).
    """

    computation: str | None = None
    focus: str | None = None
    radius: int = 2
    expand_chains: bool = False
    budget: int | None = None
    timeout: float = 30.0
    scope: str | None = None
    depth: int | None = None
    color_by: str = "kernel"

    def keywords(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def merged_keywords(capture: CaptureOptions | None, drawing: DrawOptions | None, *,
                    given_capture: CaptureOptions, given_drawing: DrawOptions) -> dict[str, Any]:
    """The keywords of ``capture`` and ``drawing`` (or of the ``given_*`` keyword values where an
    object is None), refusing an object together with keywords of its own that were changed."""
    out: dict[str, Any] = {}
    for obj, given, default, name in ((capture, given_capture, CaptureOptions(), "capture"),
                                      (drawing, given_drawing, DrawOptions(), "drawing")):
        if obj is not None and given != default:
            changed = [k for k, v in given.keywords().items() if v != default.keywords()[k]]
            raise TypeError(f"give {name}= or its keywords, not both (also given: {', '.join(changed)})")
        out.update((obj or given).keywords())
    return out
