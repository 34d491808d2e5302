"""A live TensorFlow capture compiles once: XLA's buffer assignment comes from a dump of the
compile that gave the optimized HLO (:mod:`hloviz.capture.dumps.compile_dump`), not from a second
compile for ``optimized_hlo_proto_serialized`` (issue 32)."""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from hloviz.capture import load_target
from hloviz.capture.dumps.compile_dump import CompileDump, read_sent

TF_DUMP = Path(__file__).resolve().parent / "data" / "memory" / "tf_dump"
STEM = "module_0000.a_inference_f_25__.2.cpu_after_optimizations"


def test_the_dump_beside_the_returned_text_is_read_and_removed(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    dump = CompileDump()
    assert dump.folder is not None and dump.folder.is_dir()
    assert os.environ["XLA_FLAGS"] == f"--xla_cpu_enable_fast_math=false --xla_dump_to={dump.folder}"
    for p in TF_DUMP.glob("module_*"):  # what XLA writes there while compiling (TF 2.21, CPU)
        shutil.copy(p, dump.folder / p.name)
    post = (TF_DUMP / f"{STEM}.txt").read_text()
    sent = dump.buffer_assignment(post, "2.21.0")
    record = read_sent(sent)  # the child sends the file's text; the process that started it reads it
    assignment = (TF_DUMP / f"{STEM}-buffer-assignment.txt").read_text()
    assert record is not None and "dumped by the compile" in record["origin"]
    total = re.search(r"^Total bytes used: (\d+)", assignment, re.MULTILINE)
    assert total is not None and record["total_bytes"] == int(total.group(1))
    assert len(record["allocations"]) == len(re.findall(r"^allocation \d+:", assignment, re.MULTILINE))
    assert record["live"]["sequence"]  # the live ranges XLA wrote come along
    # another module's text: that file is not its buffer assignment
    assert dump.buffer_assignment(post.replace("tanh(", "exponential("), "2.21.0") is None
    assert read_sent({**sent, "dumped": assignment[: assignment.index("allocation 1:")]}) is None  # cut short
    assert read_sent({"origin": "a proto", "total_bytes": 1}) == {"origin": "a proto", "total_bytes": 1}
    folder = dump.folder
    dump.close()
    assert not folder.exists() and os.environ["XLA_FLAGS"] == "--xla_cpu_enable_fast_math=false"


def test_a_users_own_dump_is_left_alone(monkeypatch, tmp_path):
    monkeypatch.setenv("XLA_FLAGS", f"--xla_dump_to={tmp_path}")
    dump = CompileDump()
    assert dump.folder is None and os.environ["XLA_FLAGS"] == f"--xla_dump_to={tmp_path}"
    assert dump.buffer_assignment("HloModule m\n", "2.21.0") is None
    dump.close()
    assert tmp_path.is_dir()


def test_without_flags_the_variable_goes_away_again(monkeypatch):
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    dump = CompileDump()
    assert dump.folder is not None and "XLA_FLAGS" in os.environ
    dump.close()
    assert "XLA_FLAGS" not in os.environ


@pytest.mark.requires_tf
def test_a_live_capture_reads_the_assignment_of_its_one_compile(tmp_path):
    model = tmp_path / "tanh_chain.py"
    model.write_text(textwrap.dedent("""
        import tensorflow as tf

        w = tf.Variable(tf.ones((128, 128)))

        @tf.function(jit_compile=True)
        def f(x):
            for _ in range(3):
                x = tf.tanh(x @ w)
            return tf.reduce_sum(x), x
    """))
    before = set(Path("/dev/shm").glob("hloviz-xla-dump-*")) if Path("/dev/shm").is_dir() else set()
    cap = load_target(f"{model}:f", args=["f32[64,128]"], isolate=True)
    memory = cap.memory
    assert memory is not None, "the capture kept no buffer assignment"
    assert "dumped by the compile" in memory["origin"], memory["origin"]  # not a second compile's proto
    assert cap.post_text is not None
    names = set(re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = ", cap.post_text, re.MULTILINE))
    values = {v[1] for a in memory["allocations"] for v in a["values"]}
    assert values and values <= names  # XLA's values are the returned module's instructions
    after = set(Path("/dev/shm").glob("hloviz-xla-dump-*")) if Path("/dev/shm").is_dir() else set()
    assert after <= before  # the dump folder went away with the capture
