"""Option objects for :func:`hloviz.api.show` and :func:`hloviz.api.render`.

Their settings come in three groups: how to get the HLO (:class:`CaptureOptions`), how to draw
it (:class:`DrawOptions`, both functions) and how ``render``'s picture fits its page
(:class:`FitOptions`). Both functions do their work on these objects; their keywords are a
convenience that builds them. A caller can pass the settings one by one as keywords, or build
the objects once and pass them (the CLI builds them from its options)::

    from hloviz import api
    from hloviz.api.options import CaptureOptions, DrawOptions, FitOptions

    how = CaptureOptions(args=("f32[8,16]",))
    look = DrawOptions(budget=120, expand_chains=True)
    api.show("model.py:fn", "out/", capture=how, drawing=look)
    api.render("model.py:fn", "post.svg", capture=how, drawing=look, fit=FitOptions(theme="dark"))

Giving an object *and* one of its keywords with a non-default value is a ``TypeError``: which
one should win would be a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["CaptureOptions", "DrawOptions", "FitOptions", "chosen"]


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


@dataclass(frozen=True)
class FitOptions:
    """How :func:`hloviz.api.render`'s picture fits the page it goes on (see
    :mod:`hloviz.render.page.page` and :mod:`hloviz.render.layout.wrap`).

    ``theme``: ``light``, ``dark`` or ``auto`` (the reader's setting); ``width`` and
    ``max_height``: CSS lengths the SVG is sized to; ``wrap``: ``auto``, ``off`` or a number of
    parts that long columns are cut into, side by side, so that height over width comes near
    ``aspect`` (None: 1.4, a portrait page); ``layout``: ``auto``, ``whole`` or ``blocks``
    (whether each column is laid out in one go or block by block).
    """

    theme: str = "light"
    width: str | None = None
    max_height: str | None = None
    wrap: str | int = "auto"
    aspect: float | None = None
    layout: str = "auto"

    def keywords(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


Options = TypeVar("Options", CaptureOptions, DrawOptions, FitOptions)


def chosen(name: str, given: Options | None, from_keywords: Options) -> Options:
    """The options object ``given`` as ``name=``, else the one built from the keywords; refusing
    an object together with keywords of its own that were changed from their defaults."""
    if given is None:
        return from_keywords
    default = type(from_keywords)()
    if from_keywords != default:
        changed = [k for k, v in from_keywords.keywords().items() if v != default.keywords()[k]]
        raise TypeError(f"give {name}= or its keywords, not both (also given: {', '.join(changed)})")
    return given
