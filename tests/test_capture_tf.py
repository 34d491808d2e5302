"""Live TensorFlow capture of the samples: the truths the seed documents claim, from real TF.

Each sample is captured once per session (TensorFlow tracing and XLA compiles dominate the time).
The 100M-element seed is captured at full size on purpose: it must cost no memory.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

import hloviz
from hloviz.capture import Capture, load_target, save_capture
from hloviz.cli import main
from hloviz.errors import CaptureError, InputError

from . import entry_of, present, root_of
from .conftest import restore_default_sigint

pytestmark = pytest.mark.requires_tf

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
FUSED = SAMPLES / "fused_additions.py"


def line_of(path: Path, snippet: str) -> int:
    """The 1-based number of the first line of ``path`` containing ``snippet``."""
    return next(i for i, text in enumerate(Path(path).read_text().splitlines(), 1) if snippet in text)


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Captured:
    """Captures made once per session, with the notes each one printed."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[Capture, list[str], float]] = {}

    def get(self, target: str, **kw) -> tuple[Capture, list[str], float]:
        key = target + repr(sorted(kw.items()))
        if key not in self.cache:
            notes: list[str] = []
            before = _maxrss_mb()
            cap = load_target(target, notify=notes.append, **kw)
            self.cache[key] = (cap, notes, _maxrss_mb() - before)
        return self.cache[key]


@pytest.fixture(scope="session")
def captured() -> Captured:
    from hloviz.capture import quiet

    quiet.before_import(verbose=False)
    import tensorflow  # noqa: F401  (so memory growth below measures capture, not the import)

    return Captured()


def opcodes(comp) -> Counter:
    return Counter(i.opcode for i in comp.instructions)


def fusions(module):
    return [i for i in module.instructions() if i.opcode == "fusion"]


def test_import_hloviz_does_not_import_tensorflow():
    code = "import hloviz, hloviz.capture, hloviz.cli, sys; print('tensorflow' in sys.modules, 'jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_fused_additions_is_one_kernel_of_1000_adds(captured):
    cap, notes, grew_mb = captured.get(f"{FUSED}:fused_additions")
    assert notes == []  # already jit_compile=True: used as is
    assert cap.info["args"] == ["f32[100000000]", "f32[]"] and cap.info["arg_source"] == "HLOVIZ_ARGS"
    assert cap.info["jit_compile"] is True and cap.info["framework"] == "tensorflow"
    assert grew_mb < 200, f"capturing a 400 MB argument grew the process by {grew_mb:.0f} MB"
    pre, post = cap.pre_module(), cap.post_module()
    assert pre.entry.parameters[0].shape.dims == (100_000_000,)
    assert sum(1 for i in pre.instructions() if i.opcode == "add") == 1000
    [fusion] = fusions(post)
    assert post.entry.root is fusion and fusion.fusion_kind == "kLoop"
    fused = fusion.called_computations[0]
    assert opcodes(fused)["add"] == 1000
    assert not any(i.opcode == "constant" for i in post.instructions())  # nothing folded
    kernels = [i for i in post.entry.instructions if i.opcode not in ("parameter", "constant", "tuple",
                                                                      "get-tuple-element", "bitcast")]
    assert kernels == [fusion]


def test_fused_additions_source_map_points_at_the_loop(captured):
    cap, _, _ = captured.get(f"{FUSED}:fused_additions")
    smap = cap.info["source_map"]
    line = line_of(FUSED, "x = x + delta")
    adds = {k: v for k, v in smap.items() if re.fullmatch(r"add(_\d+)?", k)}
    assert len(adds) == 1000
    assert {(v["file"], v["line"], v["function"]) for v in adds.values()} == {(str(FUSED), line, "fused_additions")}
    # every add instruction's op_name, before and after optimization, is in the map
    for module in (cap.pre_module(), cap.post_module()):
        names = {i.metadata.op_name for i in module.instructions() if i.opcode == "add"}
        assert names and names <= set(smap)
    assert cap.info["tf_ops"]["add_999"] == "AddV2"


def test_fused_additions_const_folds_into_one_add_of_1000(captured):
    cap, _, _ = captured.get(f"{FUSED}:fused_additions_const")
    pre, post = cap.pre_module(), cap.post_module()
    assert sum(1 for i in pre.instructions() if i.opcode == "add") == 1000
    [fusion] = fusions(post)
    fused = fusion.called_computations[0]
    assert opcodes(fused)["add"] == 1
    [const] = [i for i in post.instructions() if i.opcode == "constant"]
    assert const.literal.strip() == "1000" and str(const.shape) == "f32[]"
    add = fused.root
    assert add.opcode == "add" and add.operands[1].opcode == "broadcast" and add.operands[1].operands[0] is const


def test_constant_arithmetic_folds_into_one_literal(captured):
    """TF 2.21 folds small constants itself, before XLA: pre-opt HLO already has the literal."""
    cap, _notes, _ = captured.get(f"{SAMPLES / 'constant_folding.py'}:constant_arithmetic")
    assert cap.info["args"] == [] and cap.info["arg_source"] == "none"
    pre, post = cap.pre_module(), cap.post_module()
    expected = [1 * 4 + 0.841470985, 2 * 5 + 0.909297427, 3 * 6 + 0.141120008]
    for module in (pre, post):
        ops = Counter(i.opcode for i in module.instructions())
        assert ops["constant"] == 1 and not {"multiply", "sine", "add", "fusion"} & set(ops)
        [const] = [i for i in module.instructions() if i.opcode == "constant"]
        assert [float(v) for v in const.literal.strip("{} ").split(",")] == pytest.approx(expected, rel=1e-6)
    # the arithmetic survives as TF ops, each with its line
    ops = cap.info["tf_ops"]
    assert sorted(ops[n] for n in ("mul", "Sin", "add")) == ["AddV2", "Mul", "Sin"]
    assert {cap.info["source_map"][n]["line"] for n in ("mul", "Sin", "add")} == {
        line_of(SAMPLES / "constant_folding.py", "return a * b + tf.sin(a)")}


def test_constant_arithmetic_xla_folds_into_one_scalar(captured):
    """Past TF's 10 MiB folding limit XLA gets the ops, and folds them to one scalar literal."""
    cap, _, _ = captured.get(f"{SAMPLES / 'constant_folding.py'}:constant_arithmetic_xla")
    pre, post = cap.pre_module(), cap.post_module()
    pre_ops = Counter(i.opcode for i in pre.instructions())
    assert pre_ops["multiply"] == 1 and pre_ops["sine"] == 1 and pre_ops["add"] == 1
    post_ops = Counter(i.opcode for i in post.instructions())
    assert not {"multiply", "sine", "add"} & set(post_ops)
    [const] = [i for i in post.instructions() if i.opcode == "constant"]
    assert str(const.shape) == "f32[]" and float(const.literal) == pytest.approx(1.5 * 2 + 0.997494987, rel=1e-6)
    assert const.metadata.op_name == "add"
    assert len(fusions(post)) == 1  # the broadcast of that scalar: the only kernel


def _matmul_kernels(post):
    entry = post.entry
    dots = [i for i in entry.instructions if i.opcode == "dot"]
    fs = fusions(post)
    by_kind = {f.fusion_kind: Counter(i.opcode for i in f.called_computations[0].instructions) for f in fs}
    return dots, fs, by_kind


@pytest.mark.parametrize("fn", ["matmul_chain", "matmul_chain_no_jit"])
def test_matmul_chain_fuses_the_elementwise_tail_not_the_matmul(captured, fn):
    cap, notes, _ = captured.get(f"{SAMPLES / 'matmul_chain.py'}:{fn}")
    assert cap.info["args"] == ["f32[8192,8192]", "f32[8192,8192]"]
    post = cap.post_module()
    dots, fs, by_kind = _matmul_kernels(post)
    assert len(dots) == 1 and dots[0].shape.dims == (8192, 8192)  # the matmul: a kernel of its own
    assert len(fs) == 2
    loop = by_kind["kLoop"]
    assert loop["sine"] == 1 and loop["add"] == 1 and loop["maximum"] == 1  # + sin, relu: one kernel
    assert any(i.opcode == "reduce" for f in fs for i in f.called_computations[0].instructions)
    ops = cap.info["tf_ops"]
    assert [ops[n] for n in ("MatMul", "Sin", "add", "Relu", "Sum")] == ["MatMul", "Sin", "AddV2", "Relu", "Sum"]
    if fn == "matmul_chain":
        assert notes == [] and cap.info["jit_compile"] is True and cap.info["wrapped"] is None
    else:
        assert cap.info["jit_compile"] is False and cap.info["wrapped"] == "tf.function(jit_compile=True)"
        assert len(notes) == 1 and "without jit_compile=True" in notes[0]


def test_save_and_reload_a_live_capture(captured, tmp_path):
    cap, _, _ = captured.get(f"{SAMPLES / 'matmul_chain.py'}:matmul_chain")
    out = save_capture(cap, tmp_path / "mm")
    back = load_target(str(out))
    assert back.post_text == cap.post_text and back.pre_text == cap.pre_text
    assert back.info["source_map"] == cap.info["source_map"]
    assert back.info["tensorflow"] == cap.info["tensorflow"] and back.info["device"].endswith("CPU:0")
    assert hloviz.to_text(present(back.post_module(), "a post module")) == hloviz.to_text(
        present(cap.post_module(), "a post module"))


def test_cli_dump_in_process(tmp_path, capsys):
    main(["dump", f"{SAMPLES / 'constant_folding.py'}:constant_arithmetic", "-o", str(tmp_path / "c")])
    # a live capture keeps XLA's own buffer assignment beside the HLO (memory.json)
    assert sorted(os.listdir(tmp_path / "c")) == ["capture.json", "memory.json", "post.hlo", "pre.hlo"]
    assert "wrote" in capsys.readouterr().out


@pytest.fixture
def model(tmp_path):
    def make(body: str) -> Path:
        path = tmp_path / f"m{len(list(tmp_path.iterdir()))}.py"
        path.write_text("import tensorflow as tf\n" + textwrap.dedent(body))
        return path
    return make


def test_plain_function_is_wrapped_and_user_is_told(model):
    path = model("""
        def plain(x, y):
            return tf.sin(x) + y
    """)
    notes: list[str] = []
    cap = load_target(f"{path}:plain", args=["f32[4]", "f32[]"], notify=notes.append)
    assert notes == ["plain is a plain Python function; wrapped it in tf.function(jit_compile=True)"]
    assert cap.info["wrapped"] == "tf.function(jit_compile=True)"
    assert cap.info["source_map"]["Sin"]["line"] == line_of(path, "tf.sin(x) + y")
    assert "sine" in Counter(i.opcode for i in present(cap.pre_module(), "a pre module").instructions())


def test_input_signature_literals_keywords_and_nested_functions(model):
    path = model("""
        @tf.function(jit_compile=True, input_signature=[tf.TensorSpec([3, 5], tf.float32)])
        def signed(x):
            return tf.reduce_sum(x, axis=1)

        @tf.function
        def inner(x):
            return tf.cos(x) * 2.0

        @tf.function(jit_compile=True)
        def scaled(x, k, mode):
            y = inner(x) * k
            return tf.nn.relu(y) if mode == "relu" else y
    """)
    cap = load_target(f"{path}:signed")
    assert cap.info["arg_source"] == "input_signature" and cap.info["args"] == ["f32[3,5]"]
    assert str(root_of(present(cap.post_module(), "a post module")).shape).startswith("f32[3]")
    cap = load_target(f"{path}:scaled", args=["f32[7]", "3", "mode='relu'"])
    assert cap.info["args"] == ["f32[7]", "3", "mode='relu'"]
    assert len(entry_of(present(cap.pre_module(), "a pre module")).parameters) == 1  # k and mode were Python values
    smap = cap.info["source_map"]
    assert smap["PartitionedCall/Cos"]["line"] == line_of(path, "tf.cos(x)")
    assert smap["PartitionedCall/Cos"]["function"] == "inner"
    assert smap["Relu"]["line"] == line_of(path, "tf.nn.relu(y)")
    # TF may join merged ops' names with ';' (e.g. "Cos;PartitionedCall/Cos"); source_for copes
    from hloviz.capture import source_for

    cos = [i for i in present(cap.pre_module(), "a pre module").instructions() if i.opcode == "cosine"]
    assert cos and all(present(source_for(i.metadata.op_name, smap), i.metadata.op_name)["function"] == "inner"
                   for i in cos)


def test_control_flow_ops_are_mapped(model):
    path = model("""
        @tf.function(jit_compile=True)
        def loop(x):
            for _ in tf.range(3):
                x = x * 2.0
            return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x), lambda: tf.cos(x))
    """)
    cap = load_target(f"{path}:loop", args=["f32[4]"])
    smap = cap.info["source_map"]
    assert smap["while/mul"]["line"] == line_of(path, "x = x * 2.0")
    assert smap["cond/Sin"]["line"] == line_of(path, "tf.cond(")
    from hloviz.capture import source_for

    post = present(cap.post_module(), "a post module")
    post_names = {i.metadata.op_name for i in post.instructions()} - {"", "XLA_Args", "XLA_Retvals"}
    mapped = {n for n in post_names if source_for(n, smap)}
    assert "while/mul" in mapped and any(n.endswith("Sin") for n in mapped)


def test_tracing_error_shows_the_users_line(model):
    path = model("""
        @tf.function(jit_compile=True)
        def bad(x):
            y = x * 2.0
            return tf.matmul(y, y)
    """)
    with pytest.raises(CaptureError) as info:
        load_target(f"{path}:bad", args=["f32[4]"])
    msg = str(info.value)
    assert msg.startswith("tracing bad failed: ValueError")
    assert f'File "{path}", line {line_of(path, "tf.matmul")}, in bad' in msg and "return tf.matmul(y, y)" in msg


def test_xla_error_is_xlas_own_message(model):
    path = model("""
        @tf.function(jit_compile=True)
        def dynamic(x, n):
            for _ in tf.range(n):
                x = x + 1.0
            return x
    """)
    with pytest.raises(CaptureError) as info:
        load_target(f"{path}:dynamic", args=["f32[4]", "s32[]"])
    msg = str(info.value)
    assert msg.startswith("XLA could not compile dynamic")
    assert "must be a compile-time constant" in msg
    line = line_of(path, "tf.range(n)")
    assert re.search(f'File "/?{re.escape(str(path).lstrip("/"))}", line {line}, in dynamic', msg)
    frames = re.findall(r'File "([^"]*)"', msg)
    assert len(frames) == 1  # hloviz, TensorFlow and this test's own frames are trimmed


def test_wrong_spec_count_and_unknown_device(model):
    path = model("""
        @tf.function(jit_compile=True)
        def two(x, delta):
            return x + delta
    """)
    with pytest.raises(InputError, match=r"two\(x, delta\) does not accept the 1 argument spec"):
        load_target(f"{path}:two", args=["f32[4]"])
    with pytest.raises(InputError) as info:
        load_target(f"{path}:two", args=["f32[4]", "f32[]"], device="GPU:7")
    assert "device 'GPU:7' not found" in str(info.value) and "CPU:0" in str(info.value)
    cap = load_target(f"{path}:two", args=["f32[4]", "f32[]"], device="cpu:0")
    assert cap.info["device"].endswith("device:CPU:0") and cap.info["platform"] == "Host"


def _wait_for_tensorflow(proc: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until the child has loaded TensorFlow's library (so Ctrl-C lands inside the
    command, not in Python's own start-up), then a little longer, into the capture."""
    if not Path(f"/proc/{proc.pid}/maps").exists():
        time.sleep(5)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        # the CLI captures in a child process: look at hloviz and its children
        for pid in [proc.pid, *_children(proc.pid)]:
            try:
                if "libtensorflow_framework" in Path(f"/proc/{pid}/maps").read_text():
                    time.sleep(0.5)
                    return
            except OSError:
                pass
        time.sleep(0.05)


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def test_interrupted_cli_dump_leaves_no_folder(tmp_path):
    """Ctrl-C while TensorFlow loads or compiles: exit 130, no folder, no temporary left."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "hloviz", "dump", f"{FUSED}:fused_additions",
                             "-o", str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path, preexec_fn=restore_default_sigint)
    _wait_for_tensorflow(proc)
    children = _children(proc.pid)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert os.listdir(tmp_path) == []
    for child in children:  # the capture's child process ended with hloviz
        deadline = time.monotonic() + 10
        while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(f"/proc/{child}").exists(), f"capture process {child} outlived hloviz"


@pytest.mark.parametrize("weights", ['{"k": "f32[8,2]", "b": "f32[2]"}',
                                     '{"k": tf.zeros([8, 2]), "b": tf.zeros([2])}'])
def test_a_dict_argument_of_weights_is_traced_and_named(tmp_path, weights):
    # ``f(x, w)`` with ``w`` a dict of tensors, its shapes in HLOVIZ_ARGS as strings or as the
    # tensors themselves: experimental_get_compiler_ir refused the dict of TensorSpecs ("supports
    # either all inputs are TensorSpec or all inputs are tf.Tensor"), which hloviz reported as a
    # bug of its own. Oracle: the entry parameters' shapes by regex over the captured HLO, and
    # the names tf.nest gives the dict's leaves (sorted keys: b, then k).
    model = tmp_path / "dense.py"
    model.write_text(textwrap.dedent(f'''
        import tensorflow as tf

        @tf.function(jit_compile=True)
        def f(x, w):
            return tf.nn.relu(x @ w["k"] + w["b"])

        HLOVIZ_ARGS = {{"f": [tf.zeros([4, 8]), {weights}]}}
    '''))
    cap = load_target(f"{model}:f")
    entry = cap.pre_text[cap.pre_text.index("ENTRY"):]
    shapes = {int(n): s for s, n in re.findall(r"= (f32\[[\d,]*\])\{?[\d,]*\}? parameter\((\d+)\)", entry)}
    assert shapes == {0: "f32[4,8]", 1: "f32[2]", 2: "f32[8,2]"}, shapes
    assert cap.info["parameter_names"] == {"0": "x", "1": "w['b']", "2": "w['k']"}


def test_captured_tensors_are_named_where_the_code_keeps_them(tmp_path):
    # a tf.constant at module level and an adapted Keras Normalization (which normalizes by
    # tensors it keeps as attributes, not by its variables) are captured by the function as
    # tensors: their entry parameters were named by XLA alone (arg1.1). Oracle: the names this
    # test's own model file gives them, each checked against its parameter's shape by regex.
    model = tmp_path / "scaled.py"
    model.write_text(textwrap.dedent('''
        import keras
        import numpy as np
        import tensorflow as tf

        scale_table = tf.constant(np.full((3, 5), 0.5, dtype="float32"))
        norm = keras.layers.Normalization(name="standardize")
        norm.adapt(np.arange(12, dtype="float32").reshape(4, 3))

        @tf.function(jit_compile=True)
        def f(x):
            return norm(x) @ scale_table

        HLOVIZ_ARGS = {"f": ["f32[2,3]"]}
    '''))
    cap = load_target(f"{model}:f")
    entry = cap.pre_text[cap.pre_text.index("ENTRY"):]
    shapes = {int(n): s for s, n in re.findall(r"= (f32\[[\d,]*\])\{?[\d,]*\}? parameter\((\d+)\)", entry)}
    names = cap.info["parameter_names"]
    assert names.get("0") == "x" and shapes[0] == "f32[2,3]"
    by_name = {v: int(k) for k, v in names.items()}
    assert {"scale_table", "standardize/mean", "standardize/variance"} <= set(by_name), names
    assert shapes[by_name["scale_table"]] == "f32[3,5]"
    assert shapes[by_name["standardize/mean"]] == shapes[by_name["standardize/variance"]] == "f32[1,3]"
    assert not any(re.fullmatch(r"arg\d+(\.\d+)?", v) for v in names.values()), names
