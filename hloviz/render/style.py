"""Colours and shapes: the palette users of XLA's graph dumps already know.

Per category (see :mod:`hloviz.opcodes`): elementwise yellow, data movement green, dot and
convolution dark blue, reduce purple, parameters orange, control flow dark green, fusions as
grey clusters. Kernel colours (side-by-side pictures) come from :func:`kernel_colour`, a
fixed palette indexed by kernel number, so "kernel 3" has the same colour in every picture.
All values are plain ``#rrggbb`` strings, usable in DOT, SVG and CSS alike.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CategoryStyle", "CATEGORY_STYLES", "FONT", "KERNEL_PALETTE", "category_style", "kernel_colour",
           "FOLDED", "ELIMINATED", "HIGHLIGHT", "FUSION_CLUSTER", "BODY_CLUSTER", "COLLAPSED", "FOCUS", "SCOPE", "SCOPE_CLUSTER", "heat_colour", "tint"]

#: The font every picture uses. A generic family keeps pictures free of external font files.
FONT = "Helvetica,Arial,sans-serif"


@dataclass(frozen=True)
class CategoryStyle:
    """How nodes of one opcode category are filled and outlined."""

    fill: str
    border: str
    font: str = "#000000"


CATEGORY_STYLES: dict[str, CategoryStyle] = {
    "parameter": CategoryStyle("#ffb74d", "#c88719"),
    "constant": CategoryStyle("#eeeeee", "#9e9e9e"),
    "elementwise": CategoryStyle("#fff59d", "#c9bc56"),
    "data-movement": CategoryStyle("#c8e6c9", "#7cb342"),
    "dot": CategoryStyle("#1e3a8a", "#0d1f52", "#ffffff"),
    "convolution": CategoryStyle("#1e3a8a", "#0d1f52", "#ffffff"),
    "reduce": CategoryStyle("#ce93d8", "#8e24aa"),
    "control-flow": CategoryStyle("#1b5e20", "#0b3d0f", "#ffffff"),
    "fusion": CategoryStyle("#e0e0e0", "#9e9e9e"),
    "custom-call": CategoryStyle("#ffccbc", "#e64a19"),
    "collective": CategoryStyle("#f8bbd0", "#c2185b"),
    "tuple": CategoryStyle("#ffffff", "#bdbdbd"),
    "other": CategoryStyle("#ffffff", "#757575"),
}


def category_style(category: str) -> CategoryStyle:
    """The style of a category; unknown categories draw like ``other``."""
    return CATEGORY_STYLES.get(category, CATEGORY_STYLES["other"])


#: Kernel colours, chosen to stay distinct from each other and readable with black text.
KERNEL_PALETTE: tuple[str, ...] = (
    "#8ecae6", "#ffb703", "#90be6d", "#f4a261", "#b388eb", "#f28482", "#4cc9f0", "#e9c46a",
    "#80ed99", "#ff99c8", "#a3c4f3", "#d4a373",
)


def kernel_colour(number: int) -> str:
    """The colour of kernel ``number`` (1-based); the palette repeats after 12 kernels."""
    return KERNEL_PALETTE[(number - 1) % len(KERNEL_PALETTE)]


#: Pre-optimization ops whose value XLA computed at compile time.
FOLDED = CategoryStyle("#ffffff", "#b08900")
#: Pre-optimization ops that left no trace in the optimized module.
ELIMINATED = CategoryStyle("#f5f5f5", "#9e9e9e", "#616161")
#: The constant a fold produced (post-optimization column), and highlighted label rows.
HIGHLIGHT = "#ffd54f"
#: Fusion clusters (fill, border), and the clusters of while/conditional/call bodies.
FUSION_CLUSTER = CategoryStyle("#f5f5f5", "#9e9e9e")
BODY_CLUSTER = CategoryStyle("#ffffff", "#1b5e20")
#: Nodes that stand for many instructions (repeats, segments).
COLLAPSED = CategoryStyle("#eceff1", "#607d8b")
#: A closed scope (a Keras layer drawn as one node), and an open scope's cluster.
SCOPE = CategoryStyle("#e3f2fd", "#1565c0")
SCOPE_CLUSTER = CategoryStyle("#fafcff", "#90a4ae")
#: The border of the instruction ``--focus`` names.
FOCUS = "#d32f2f"


#: The heat scale of ``--color-by flops|bytes``: white, yellow, orange, red.
HEAT_STOPS: tuple[tuple[int, int, int], ...] = ((255, 255, 255), (255, 238, 153), (253, 174, 97), (215, 48, 39))


def heat_colour(value: float, top: float) -> str:
    """``value``'s colour on a log scale from 0 (white) to ``top`` (red)."""
    import math

    if top <= 0 or value <= 0:
        return "#ffffff"
    t = min(1.0, math.log1p(value) / math.log1p(top))
    seg = min(len(HEAT_STOPS) - 2, int(t * (len(HEAT_STOPS) - 1)))
    local = t * (len(HEAT_STOPS) - 1) - seg
    a, b = HEAT_STOPS[seg], HEAT_STOPS[seg + 1]
    return "#" + "".join(f"{round(x + (y - x) * local):02x}" for x, y in zip(a, b))


def tint(colour: str, amount: float = 0.6) -> str:
    """``colour`` mixed with white (``amount`` 0 → unchanged, 1 → white): a cluster's soft fill."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * amount) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)
