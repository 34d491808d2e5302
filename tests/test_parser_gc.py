"""The parse keeps a large module out of the cyclic collector's reach, and gives it back.

Why: the first reads of a large module's attributes set off a full collection of the whole
module (0.7 s on the 312k-instruction benchmark module), so ``hloviz.parse`` leaves a large module
frozen (``gc.freeze``) until the next parse, which unfreezes and collects what was dropped.
The size threshold is lowered here so that a small real capture takes the large-module path.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from hloviz import collector, parser

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "memory" / "matmul_chain" / "post.hlo"


@pytest.fixture
def large_path(monkeypatch):
    # what an earlier test's large module left frozen is hloviz's own: given back, as the next
    # parse would (which test runs first in this process depends on how xdist shares the files)
    collector.thaw()
    if gc.get_freeze_count() or not gc.isenabled():
        pytest.skip("the process froze objects itself or paused the collector: the parse leaves them alone")
    monkeypatch.setattr(parser, "KEEP_FROZEN_FROM_CHARS", 0)
    yield SAMPLE.read_text()
    gc.unfreeze()
    monkeypatch.setattr(collector, "_left_frozen", None)


def test_a_large_module_stays_frozen_after_the_parse(large_path):
    module = parser.parse(large_path)
    assert gc.get_freeze_count() > 0
    assert gc.isenabled()
    assert module.computations


def test_the_next_parse_frees_the_cycles_of_a_dropped_module(large_path):
    module = parser.parse(large_path)
    # Each computation refers back to its module: cycles only the collector can free.
    n_computations = len(module.computations)
    del module
    collected: list[int] = []

    def count(phase, info):
        if phase == "stop":
            collected.append(info["collected"])

    gc.callbacks.append(count)
    try:
        parser.parse(large_path)
    finally:
        gc.callbacks.remove(count)
    assert sum(collected) >= n_computations


def _is_frozen(obj: object) -> bool:
    return gc.is_tracked(obj) and not any(o is obj for g in range(3) for o in gc.get_objects(g))


def test_objects_the_caller_froze_after_a_parse_stay_frozen_and_the_next_parse_leaves_them(large_path):
    parser.parse(large_path)
    mine = [object()]  # made after the parse, frozen by the caller (as before a fork)
    gc.freeze()
    assert _is_frozen(mine)
    second = parser.parse(large_path)
    # neither unfrozen nor taken over: the caller's frozen set is as it left it
    assert _is_frozen(mine) and not _is_frozen(second)


def test_a_small_module_is_not_left_frozen():
    collector.thaw()  # (see large_path)
    if gc.get_freeze_count() or not gc.isenabled():
        pytest.skip("the process froze objects itself or paused the collector")
    parser.parse(SAMPLE.read_text())
    assert gc.get_freeze_count() == 0


class _Node:
    """An object in a reference cycle, watched by a weak reference."""

    def __init__(self) -> None:
        self.me = self


def test_what_a_block_builds_on_a_frozen_module_joins_it_and_the_next_parse_gives_it_back(large_path):
    parser.parse(large_path)
    with collector.frozen_while_held():
        built = [[i] for i in range(100)]
        cycle = _Node()  # dropped below: only the collector can free it
    assert gc.isenabled()
    assert _is_frozen(built) and _is_frozen(cycle)
    gone = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert gone() is not None  # frozen: no collection reaches it
    parser.parse(large_path)
    assert gone() is None  # the parse gave the frozen set back and collected


def test_a_block_after_the_caller_froze_freezes_nothing_more(large_path):
    parser.parse(large_path)
    gc.freeze()  # the caller's own freeze (as before a fork)
    with collector.frozen_while_held():
        built = [object()]
    assert not _is_frozen(built)


def test_a_block_without_a_frozen_module_freezes_nothing():
    collector.thaw()  # (see large_path)
    if gc.get_freeze_count() or not gc.isenabled():
        pytest.skip("the process froze objects itself or paused the collector")
    parser.parse(SAMPLE.read_text())  # small: not left frozen
    with collector.frozen_while_held():
        built = [object()]
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == 0 and not _is_frozen(built)


def _full_collections(run) -> int:
    full: list[int] = []

    def count(phase, info):
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.callbacks.append(count)
    try:
        run()
    finally:
        gc.callbacks.remove(count)
    return len(full)


def test_a_captures_two_modules_are_parsed_after_one_collection(large_path):
    from hloviz.capture.result import Capture

    parser.parse(large_path)  # a large module left frozen: each thaw would collect it
    both = Capture(large_path, large_path, {}, "two")
    assert _full_collections(both.modules) == 1
    one_by_one = Capture(large_path, large_path, {}, "two")
    assert _full_collections(lambda: (one_by_one.pre_module(), one_by_one.post_module())) == 2
    assert all(m is not None and m.computations for m in both.modules())


def test_one_thaw_nests_and_ends_with_its_block(large_path):
    with collector.one_thaw():
        with collector.one_thaw():
            parser.parse(large_path)
        assert _full_collections(lambda: parser.parse(large_path)) == 0
    assert _full_collections(lambda: parser.parse(large_path)) == 1
