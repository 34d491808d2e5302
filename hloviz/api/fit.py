"""The default overview kept to a page: drawn again with fewer boxes while its longer side is over
:data:`OVERVIEW_LONGEST` (issue 33's goal), for ``render`` and ``diff`` alike."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..render.pictures import Picture
    from ..render.views import ViewOptions

__all__ = ["OVERVIEW_LONGEST", "fitted"]

#: The longer side, in points, the default overview keeps to (issue 33): where its boxes carry
#: more rows than most (an unseen ConvNeXtTiny's: 24 boxes a column, 2,520 pt), it is
#: drawn again with fewer boxes, up to :data:`_FIT_TRIES` times.
OVERVIEW_LONGEST = 2500
_FIT_TRIES = 3


def fitted(draw: Callable[[ViewOptions], Picture], options: ViewOptions, *, fit: bool) -> Picture:
    """``draw(options)``; where ``fit`` (the default overview, as SVG: ``render``'s and ``diff``'s) and
    it is over :data:`OVERVIEW_LONGEST`, drawn again with fewer boxes a column — as many fewer as
    it is too long, two at least — while it is (none fitting, the shortest: fewer can lay out
    wider)."""
    if not fit:
        return draw(options)
    from ..render.reuse import drawings_reused

    with drawings_reused():  # a redraw starts from the first drawing's graphs and trees
        picture = best = draw(options)
        for _ in range(_FIT_TRIES):
            longest = _longest(picture)
            if longest <= OVERVIEW_LONGEST or options.budget <= 8:
                break
            # as many boxes fewer as the column is too long, two at least: a step 11% over went
            # 24 → 22 boxes (2,531 pt) → 20 (three drawings); 21 fits (two)
            fewer = max(2, options.budget - int(options.budget * OVERVIEW_LONGEST / longest))
            options = replace(options, budget=max(8, options.budget - fewer))
            picture = draw(options)
            best = min(best, picture, key=_longest)
    return best


def _longest(picture: Picture) -> float:
    """The longer side of ``picture``'s SVG in points (0 where it has none)."""
    head = (picture.svg or b"")[:2000].decode("utf-8", "replace")
    m = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', head)
    return max(float(m.group(1)), float(m.group(2))) if m else 0.0
