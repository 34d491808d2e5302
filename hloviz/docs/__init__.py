"""Pictures built with the docs: what the Sphinx directive and the MkDocs plugin share.

A docs source says what to draw (``.. hloviz:: ../captures/resnet50`` with ``:scope: block_5``,
or a fenced ``hloviz`` block in MkDocs); :mod:`hloviz.docs.pictures` turns that into an SVG,
through a cache keyed by what the picture depends on: the target's content (a capture folder's
files, an HLO file's bytes, a live ``model.py:fn`` captured once per build), the options, and
hloviz's version. A second build of unchanged docs runs no Graphviz at all.

:mod:`hloviz.sphinx` and :mod:`hloviz.mkdocs` are the two front ends; neither is imported by
``import hloviz``, and Sphinx / MkDocs are imported only there (``pip install 'hloviz[sphinx]'``
or ``'hloviz[mkdocs]'``).
"""

from __future__ import annotations

from .pictures import OPTIONS, DocPicture, PictureCache, PictureError, parse_options

__all__ = ["OPTIONS", "DocPicture", "PictureCache", "PictureError", "parse_options"]
