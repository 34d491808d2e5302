"""Python's cyclic garbage collector and the large object graphs hloviz builds.

A parsed module, a scope tree, a picture's tree of units are hundreds of thousands of objects
that all stay alive. The collector, running, walks them again and again to free nothing, so:

* **Paused while built** (:func:`collector_paused`): each allocation burst sets off a
  collection, and full ones walk everything made so far — on the 312k-instruction benchmark
  module, ``build_scope_tree`` plus ``update_targets`` took 5.6 s running and 2.9 s paused. The
  collector resumes as it was; cycles dropped meanwhile are freed by its next run.
* **Frozen while they live** (``gc.freeze``: no collection visits a frozen object; refcounting
  still frees what is dropped). Resumed, the collector would still walk what was built once or
  twice as it ages: the first reads of a large module's attributes set off a full collection of
  the whole module (0.7 s of a 2.7 s parse-and-read of the 312k-instruction module); after
  ``render`` drew an EfficientNetB0 training step, two collections of the drawing's objects took
  0.16 s, and the exit's another 0.1 s. So :func:`after_parse` leaves a large module frozen, and
  :func:`frozen_while_held` adds to that frozen set what a command builds on the module.

The price of freezing: cycles dropped meanwhile (a module's computations refer back to it; a
picture drawn and replaced) wait until the next parse, which gives the frozen set back to the
collector and collects (:func:`thaw`), or until the caller's ``gc.unfreeze()``. So only large
modules stay frozen, and only a bounded amount of work joins them (one picture and its redraws,
not the explorer's hundreds). A process that froze objects itself (``gc.freeze`` before a fork)
keeps its frozen set: hloviz then neither freezes more nor unfreezes. How hloviz tells: a
*canary* object made right after each of its freezes stays among the collector's generations
until something freezes it — hloviz itself, which makes a new one, or the process.
"""

from __future__ import annotations

import gc
import operator
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial

__all__ = ["after_parse", "collector_paused", "frozen_while_held", "one_thaw", "thaw"]


class _Canary:
    """Made just after hloviz froze everything; found frozen later, it says that the process has
    frozen objects itself since (``gc.freeze`` before a fork, say)."""


# The canary of what hloviz left frozen (None: it holds nothing frozen).
_left_frozen: _Canary | None = None
# Inside :func:`one_thaw`: whether its first thaw has run (None outside it).
_thawed_once: bool | None = None


@contextmanager
def collector_paused(*, join_frozen: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector inside the ``with`` block (re-entrant: only the
    outermost pause resumes it, and only if it was running). ``join_frozen``: see
    :func:`frozen_while_held`."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            if join_frozen and _holds_frozen():
                _freeze()  # before the collector resumes: not one collection walks what was built
            gc.enable()


def _holds_frozen() -> bool:
    """Whether what is frozen is hloviz's alone: its canary is still among the generations.
    Not by counting the frozen objects, which walks every one of them (0.075 s on the
    312k-instruction module, 0.01 s on an EfficientNetB0 step, three times a command); so a
    process that gave everything back itself (``gc.unfreeze()``) still counts as hloviz's: its
    objects are frozen with the next picture's and given back at the next parse."""
    canary = _left_frozen
    if canary is None:
        return False
    same = partial(operator.is_, canary)
    return any(any(map(same, gc.get_objects(generation))) for generation in range(3))


def _freeze() -> None:
    global _left_frozen
    gc.freeze()
    _left_frozen = _Canary()  # made after the freeze: among the young objects, until something freezes them


def thaw() -> None:
    """Give back to the collector what hloviz left frozen, and collect the cycles dropped since
    (a previous large module): called before a parse, whose own freeze would otherwise take them
    along. Only when nothing was frozen since: a caller that froze objects keeps them frozen."""
    global _left_frozen, _thawed_once
    if _thawed_once:
        return
    if _thawed_once is not None:
        _thawed_once = True
    held = _holds_frozen()
    _left_frozen = None
    if not held:
        return
    gc.unfreeze()
    if gc.isenabled():
        gc.collect()


@contextmanager
def one_thaw() -> Iterator[None]:
    """Only the first :func:`thaw` inside the block runs: for parses that follow one another
    (a capture's two modules), where nothing the first one froze was dropped before the next.
    Each thaw's full collection walks every live object to free nothing here — the first
    module's, 0.09 s before a DenseNet121 training step's optimized module was parsed."""
    global _thawed_once
    outer = _thawed_once
    if outer is None:
        _thawed_once = False
    try:
        yield
    finally:
        if outer is None:
            _thawed_once = None


def after_parse(*, keep_frozen: bool) -> None:
    """Put every object the collector tracks out of its reach: until the next parse if
    ``keep_frozen`` (a large module), else only out of the youngest generations.

    With the collector paused, the whole new module (a few objects per instruction) sits in the
    youngest generation. Left there, the first allocations after the parse walk all of it, and
    again as it ages. Moved to the oldest generation, it is still walked once: the collector
    starts a full collection when the objects that reached the oldest generation since the last
    full one outnumber a quarter of those that survived it, and the module never counted in the
    latter — so the objects made by the first reads of signatures, attributes and metadata (a
    few hundred thousand on a 300k-instruction module) set off a full collection of the whole
    module. Frozen, it is never walked. Skipped when the process froze objects itself, so as not
    to take over its frozen set.
    """
    if gc.get_freeze_count() == 0:
        if keep_frozen:
            _freeze()
        else:
            gc.freeze()  # (freeze, then unfreeze: every young object lands in the oldest generation)
            gc.unfreeze()


def frozen_while_held() -> AbstractContextManager[None]:
    """The collector paused inside the block; at its end, where hloviz holds a large module
    frozen (:func:`after_parse`), what the block built joins the frozen set, given back with it
    at the next parse. For one command's bounded work on the module (``render``'s analysis and
    picture), not for a loop of pictures: the cycles each one drops would pile up frozen."""
    return collector_paused(join_frozen=True)
