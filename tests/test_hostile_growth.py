"""Bounded memory and time on hostile input: 1×, 10× and 100× of each shape a review found.

No wall-clock limits: each shape is run at three sizes in the same process and the *growth*
is compared. With a fixed cost a and a cost b per unit, (t100 − t1) / (t10 − t1) is 11 when
the work is linear and about 100 when it is quadratic; the test allows up to 30. Memory: the
peak of traced memory at 100× must stay a small multiple of the text (the backtracking op_name
pattern cost 120 bytes per character, so a 40 MB name took gigabytes; quadratic memory would
break the bound too). Peaks at 1× and 10× are mostly fixed costs, so no ratio is taken of them.
CPU time (``time.process_time``) keeps other processes out of the figures; a shape is timed again,
up to a best of three, only while its growth is over the bound (noise only adds time), so a
failure is still judged on a best of three and a linear shape costs one run a size.
"""

from __future__ import annotations

import pytest

from . import hostile_inputs as H

#: Growth from 10× to 100× (less the 1× cost) that counts as linear; quadratic gives ~100.
MAX_GROWTH = 30
#: Peak traced memory per character of input, at 100×.
MAX_BYTES_PER_CHAR = 40
#: Shapes that are allowed more, and why. ``diff`` reports each side's memory, now estimated by
#: replaying XLA's buffer assignment (analysis/memory/dataflow.py, assign.py): about 24 bytes of
#: transient structures per character of the module, measured with tracemalloc (1.09 / 2.66 /
#: 27.0 MB at 1× / 10× / 100×: linear, but past 40). Shrinking those structures is open work.
BYTES_PER_CHAR = {"wide_diff": 48}


def _ratio(g: dict[int, tuple[float, int]]) -> float:
    small = max(g[10][0] - g[1][0], 5e-3)  # floor: timer and scheduler noise
    return (g[100][0] - g[1][0]) / small


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.requires_dot) if n in H.NEEDS_DOT else n
                                  for n in sorted(H.GROWTH_SHAPES)])
def test_work_grows_linearly_with_the_hostile_input(tmp_path, name):
    g = H.growth(name, tmp_path, settled=lambda g: _ratio(g) < MAX_GROWTH)
    figures = {f: (round(t, 4), p) for f, (t, p) in g.items()}
    assert _ratio(g) < MAX_GROWTH, f"{name}: CPU time grows super-linearly: {figures}"
    build, base, _ = H.GROWTH_SHAPES[name]
    chars = len(build(base * 100)) - len(build(base))
    limit = BYTES_PER_CHAR.get(name, MAX_BYTES_PER_CHAR)
    assert g[100][1] - g[1][1] <= limit * chars, f"{name}: memory per character: {figures}"
