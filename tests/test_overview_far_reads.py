"""An inference model's overview writes a value that three or more closed blocks far down read as
rows, not arrows (issue 33: at most 0.1 crossings an arrow). XLA's fusion duplicates a residual sum
into every later block that adds to it: InceptionResNetV2's optimized column read ``mixed_6a``'s
output from the kernels of all twenty ``block17`` layers, and its overview had 0.20 crossings an
arrow (benchmarks/heldout/round7.py; 0.066 with these rows).

The scene is built by hand: ten boxes in program order and the arrows between them; what must
become rows is counted from the places, not asked of the code.
"""

from __future__ import annotations

from hloviz.render.cut.ranks import FAR_READS, REACH, program_order
from hloviz.render.scene import Edge, Node, Row, Scene


def _scene(arrows: list[tuple[int, int]]) -> tuple[Scene, dict[str, tuple[int, float]]]:
    scene = Scene()
    for i in range(10):
        scene.nodes[f"u{i}"] = Node([Row(f"box {i}")])
    scene.edges = [Edge(f"u{a}", f"u{b}") for a, b in arrows]
    return scene, {f"u{i}": (0, float(i)) for i in range(10)}


def _drawn(scene: Scene) -> set[tuple[str, str]]:
    return {(e.src, e.dst) for e in scene.edges if not e.invisible}


def test_three_far_reads_of_one_value_by_closed_blocks_are_rows():
    far = [(0, 0 + REACH + 2), (0, 0 + REACH + 3), (0, 0 + REACH + 4)]
    scene, keys = _scene([(0, 1), *far, (2, 9)])
    blocks = frozenset(f"u{i}" for i in range(5, 10))
    stubs = program_order(scene, keys, frozenset(), False, blocks)
    assert {(s.src, s.dst) for s in stubs} == {(f"u{a}", f"u{b}") for a, b in far}
    assert all(s.why == "long" for s in stubs)
    # the near arrow and the one far read of another value are still arrows
    assert _drawn(scene) >= {("u0", "u1"), ("u2", "u9")}
    assert not _drawn(scene) & {(f"u{a}", f"u{b}") for a, b in far}
    # each end says where its arrow went: a row on the value's box and on each reader
    readers = ", ".join(f"box {b}" for _, b in far)
    assert [r.text for r in scene.nodes["u0"].rows[1:]] == [f"→ 3 users: {readers}"]
    assert all([r.text for r in scene.nodes[f"u{b}"].rows[1:]] == ["← box 0"] for _, b in far)


def test_fewer_far_reads_or_reads_by_single_ops_stay_arrows():
    reads = [(0, REACH + 2), (0, REACH + 3), (0, REACH + 4)][: FAR_READS - 1]
    scene, keys = _scene([(0, 1), *reads])
    assert program_order(scene, keys, frozenset(), False, frozenset(f"u{i}" for i in range(10))) == []
    assert _drawn(scene) >= {(f"u{a}", f"u{b}") for a, b in reads}
    # read by single ops (not closed blocks: a loop's results where the loop ends), arrows stay
    three = [(0, REACH + 2), (0, REACH + 3), (0, REACH + 4)]
    scene, keys = _scene([(0, 1), *three])
    assert program_order(scene, keys, frozenset(), False, frozenset()) == []
    assert _drawn(scene) >= {(f"u{a}", f"u{b}") for a, b in three}
