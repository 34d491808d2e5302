"""The explorer's part of an HTML page: its script and styles, and its data blocks, made safe.

The page loads nothing: the script is inline and allowed by its SHA-256 hash in the page's
Content-Security-Policy (never ``'unsafe-inline'``), and the data sits in
``<script type="application/json">`` blocks, which browsers never run. Data is JSON with
every ``<``, ``>``, ``&`` and U+2028/2029 written as ``\\uXXXX``, so no HLO string can end the
block (``</script>``) or break a script that reads it; large blocks are gzip-compressed and
base64-encoded (the browser's own ``DecompressionStream`` reads them), which keeps a
300k-instruction module's page small.

The script is one function (one closure: the parts share its state) written in parts by
concern under ``script/``, which :func:`script_source` joins in the order of
:data:`SCRIPT_PARTS`; each part opens with the comment line that names its concern:

* ``data.js`` — the script's state (opens the function), the data blocks read and decoded,
  instructions by global id, the links between ops, kernels, folded constants and diff pairs;
* ``views.js`` — one picture at a time in the viewport: showing a view, boxes made focusable,
  the breadcrumb, which view opens which box or block and where focus returns;
* ``panzoom.js`` — pan and zoom, a picture's first zoom (its smallest text readable), keys;
* ``highlight.js`` — lighting what belongs together, selecting, clicks, expand and collapse;
* ``panel.js`` — the side panel of a selected instruction and its kernel;
* ``passes.js`` — the pass history: which of XLA's passes made a kernel or a folded constant,
  the filmstrip;
* ``scopes.js`` — the model's layers (scopes from op names): lighting and opening one;
* ``search.js`` — the search box and its results;
* ``tables.js`` — the report's tables (sort, filter, link) and the memory section's rows;
* ``start.js`` — the selection kept in the URL fragment, the read-only API for scripts and
  tests, and the start (closes the function).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from .data import ExplorerData

if TYPE_CHECKING:
    from .on_demand import OnDemand

__all__ = ["SCRIPT_PARTS", "ExplorerPayload", "encode_block", "explorer_payload", "script_hash", "script_source",
           "style_source"]

#: Blocks larger than this (bytes of JSON) are compressed.
COMPRESS_OVER = 256 * 1024
#: The data the script needs at once stays plain JSON up to this size: the browser parses it in
#: the same breath as the script, while a compressed block is decoded only after the whole page
#: is parsed (a real model's page is mostly pictures, so that would be most of its load time).
PLAIN_DATA_UP_TO = 3 * 1024 * 1024
#: The script's parts under ``script/``, in the order they are joined (see the module's docstring).
SCRIPT_PARTS = ("data.js", "views.js", "panzoom.js", "highlight.js", "panel.js", "passes.js", "scopes.js",
                "search.js", "tables.js", "start.js")
#: The package the script and styles lie in: this module's (``__package__`` is typed optional).
_PACKAGE = __name__.rpartition(".")[0]


@cache
def script_source() -> str:
    """The explorer's script: its parts (:data:`SCRIPT_PARTS`, under ``script/`` next to this
    module) joined as they are, no separator added (each part ends with its own newline)."""
    folder = resources.files(_PACKAGE).joinpath("script")
    return "".join(folder.joinpath(name).read_text(encoding="utf-8") for name in SCRIPT_PARTS)


@cache
def style_source() -> str:
    """The explorer's styles (``explorer.css``)."""
    return resources.files(_PACKAGE).joinpath("explorer.css").read_text(encoding="utf-8")


def script_hash(source: str) -> str:
    """The CSP source expression that allows exactly this inline script."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def json_for_script(value: object) -> str:
    """``value`` as JSON that is safe between ``<script type="application/json">`` tags."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def encode_block(block_id: str, value: object, *, compress_over: int = COMPRESS_OVER) -> str:
    """One data block: plain JSON, or gzip+base64 (``data-encoding="gzip-base64"``) when big."""
    text = json_for_script(value)
    if len(text) > compress_over:
        packed = base64.b64encode(gzip.compress(text.encode("ascii"), compresslevel=6, mtime=0)).decode("ascii")
        return f'<script type="application/json" id="{block_id}" data-encoding="gzip-base64">{packed}</script>'
    return f'<script type="application/json" id="{block_id}">{text}</script>'


@dataclass(frozen=True)
class ExplorerPayload:
    """What a page embeds for the explorer: the data the script needs at once (``blocks``), the
    script, and the data it reads later (``later``: other pictures, HLO text). The page puts
    them in that order, so the script runs before the browser has read the big blocks."""

    blocks: str
    script: str
    later: str = ""
    #: The picture the page shows first when it is not the one the caller drew (the explorer's
    #: first view, fitted to a screen: :func:`hloviz.render.page.explorer.build.first_view`), and its notes.
    picture_svg: str | None = None
    picture_notes: tuple[str, ...] = ()
    #: What the page says of its explorer under its picture (how its detail opens).
    notes: tuple[str, ...] = ()
    #: Draws the detail pictures the page asks for, when they were not drawn ahead
    #: (:mod:`.on_demand`; ``hloviz show --open`` serves them).
    on_demand: OnDemand | None = None

    @property
    def csp_script_src(self) -> str:
        return script_hash(self.script)


def explorer_payload(data: ExplorerData, *, compress_over: int = COMPRESS_OVER) -> ExplorerPayload:
    """The blocks: ``hv-data`` (everything but the SVGs of the other views and the HLO text),
    ``hv-svgs`` and ``hv-texts`` (read when first needed)."""
    main = dict(data.main)
    views = [dict(v) for v in main.get("views", [])]
    svgs = [v.pop("svg", None) for v in views]
    main["views"] = views
    later = [encode_block("hv-svgs", svgs, compress_over=compress_over),
             encode_block("hv-texts", data.texts, compress_over=compress_over)]
    first = encode_block("hv-data", main, compress_over=max(compress_over, PLAIN_DATA_UP_TO)
                         if compress_over == COMPRESS_OVER else compress_over)
    return ExplorerPayload(first, script_source(),
                           "\n".join(later))
