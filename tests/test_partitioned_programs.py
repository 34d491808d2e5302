"""Programs partitioned over several devices: captured as JAX compiles them, their numbers said
to be one device's.

Round 52 (``benchmarks/heldout/round52_jax.py``, the first held-out programs for several
devices): ``sharded_step``, an MLP's step under ``jax.jit`` with ``NamedSharding``s on a 2 × 2
mesh, could not be captured — every argument was placed on one device, which the function's own
``in_shardings`` refused (so were a ``shard_map`` and a ``pmap``); and once captured, the verdict
set the whole program's ops beside one device's kernels without a word. The oracles: the
module header XLA writes (``num_partitions=4``), the collectives in the text (regular
expressions), and XLA's own records (the memory corpus' ``jax_sharded_step``, FLOPs in
``tests/test_flops_against_xla.py``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hloviz.cli import main

from .test_overview_heldout_steps import _text

HERE = Path(__file__).resolve().parent / "data" / "orders"
ROOT = Path(__file__).resolve().parent.parent


def _stats(tmp_path: Path, capsys, name: str, *stages: str) -> str:
    files = []
    for stage in stages:
        path = tmp_path / f"{name}_{stage}.hlo"
        path.write_text(_text(HERE / f"{name}_{stage}.hlo.gz"), encoding="utf-8")
        files += [f"--{stage}", str(path)]
    try:
        code = main(["stats", *files])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("name, stages", [("sharded_step", ("pre", "post")), ("ring_sum", ("post",))])
def test_the_verdict_says_the_numbers_are_one_devices(tmp_path, capsys, name, stages):
    post = _text(HERE / f"{name}_post.hlo.gz")
    devices = int(re.search(r"^HloModule [^\n]*\bnum_partitions=(\d+)", post).group(1))
    assert devices == 4 and re.search(r"\ball-(reduce|gather)\(", post)  # the situation
    out = _stats(tmp_path, capsys, name, *stages)
    assert f"one device's share of {devices} (num_partitions={devices}): its numbers are per device" in out


def test_a_one_device_program_says_nothing_of_devices(tmp_path, capsys):
    post = _text(HERE / "momentum_by_hand_post.hlo.gz")
    assert not re.search(r"num_partitions=|replica_count=", post.split("\n", 1)[0])
    assert "per device" not in _stats(tmp_path, capsys, "momentum_by_hand", "pre", "post")


@pytest.mark.requires_jax
def test_a_function_with_its_own_shardings_is_captured_as_jax_compiles_it(tmp_path):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    out = tmp_path / "cap"
    run = subprocess.run([sys.executable, "-m", "hloviz", "dump", "benchmarks/heldout/round52_jax.py:sharded_step",
                          "-o", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    pre, post = (out / "pre.hlo").read_text(encoding="utf-8"), (out / "post.hlo").read_text(encoding="utf-8")
    assert re.search(r"sharding=\{devices=\[2,1,2\]", pre)  # the batch's NamedSharding, as written
    assert "num_partitions=4" in post.split("\n", 1)[0] and re.search(r"\ball-reduce\(", post)
    # --device puts every argument on one device: refused with what to do, no traceback
    run = subprocess.run([sys.executable, "-m", "hloviz", "dump", "benchmarks/heldout/round52_jax.py:sharded_step",
                          "--device", "cpu:0", "-o", str(tmp_path / "one")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "leave it out where the function places its own" in " ".join(run.stderr.split())


def test_the_memory_report_says_its_buffers_are_one_devices(tmp_path, capsys):
    path = tmp_path / "ring_sum_post.hlo"
    path.write_text(_text(HERE / "ring_sum_post.hlo.gz"), encoding="utf-8")
    try:
        code = main(["memory", "--post", str(path)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "one device's share of a program run on 4 devices (num_partitions=4)" in out
