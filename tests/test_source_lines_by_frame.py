"""Each kernel's source line is its own instructions' line, not the first line of their op name.

JAX names an instruction by the primitive and the scope it ran in (``jit(f)/jvp(jit(fft))/fft``):
``jnp.fft.rfft2`` on one line and ``jnp.fft.irfft2`` on the next share that name, as every
``jit(f)/mul`` of a function does. Newer XLA prints each instruction's own stack frame
(``stack_frame_id``, with ``FileNames``/``FileLocations``/``StackFrames`` tables). hloviz looked
lines up by op name, so every kernel of one name got the first one's line: round 53's Fourier
layer (``benchmarks/heldout/round53_jax.py``) said the inverse FFT was written on the forward
FFT's line, and 7,030 of the GPT sample's 14,832 optimized instructions had another line's.

The oracle: the frame tables read here by regular expression, and the script's own text.
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.cli import main

from .test_hand_written_tf_updates import stats_json
from .test_overview_heldout_steps import _text

HERE = Path(__file__).resolve().parent / "data" / "orders"
SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "heldout" / "round53_jax.py"


def _frame_line(text: str, frame_id: int, file_end: str) -> int:
    """The line in a file ending ``file_end`` of the innermost frame of ``frame_id``'s stack."""
    def table(name: str) -> dict[int, str]:
        body = re.search(rf"^{name}\n((?:\d+ .*\n)+)", text, re.MULTILINE)
        return {int(k): v for k, v in re.findall(r"^(\d+) (.*)$", body.group(1), re.MULTILINE)} if body else {}

    files, locations, frames = table("FileNames"), table("FileLocations"), table("StackFrames")
    lines = []
    while frame_id in frames:
        fields = dict(re.findall(r"(\w+)=(\d+)", frames[frame_id]))
        loc = dict(re.findall(r"(\w+)=(\d+)", locations[int(fields["file_location_id"])]))
        if files[int(loc["file_name_id"])].strip('"').endswith(file_end):
            lines.append(int(loc["line"]))
        frame_id = int(fields.get("parent_frame_id", 0)) - 1
    return lines[0]  # innermost first: the walk starts at the instruction's own frame


def test_each_fft_kernel_names_the_line_of_its_own_call(tmp_path, capsys):
    post = _text(HERE / "spectral_conv_post.hlo.gz")
    ffts = re.findall(r"%(fft\.\d+) = \S+ fft\([^\n]*op_name=\"([^\"]+)\" stack_frame_id=(\d+)", post)
    assert len(ffts) == 3 and len({op for _n, op, _f in ffts}) <= 2  # the situation: names shared
    script = SCRIPT.read_text(encoding="utf-8").splitlines()
    rfft2 = next(i for i, line in enumerate(script, 1) if "jnp.fft.rfft2(" in line and "=" in line)
    irfft2 = next(i for i, line in enumerate(script, 1) if "jnp.fft.irfft2(" in line and "=" in line)
    want = {name: _frame_line(post, int(frame), "round53_jax.py") for name, _op, frame in ffts}
    assert set(want.values()) == {rfft2, irfft2}  # the forward transform's line, and the inverse's
    kernels = {k["name"]: k for k in stats_json(tmp_path, capsys, "spectral_conv")["kernels"]}
    for name, line in want.items():
        assert [s.rsplit(":", 1)[1] for s in kernels[name]["source_lines"]] == [str(line)], kernels[name]["source_lines"]


def test_a_boxs_tooltip_names_its_instructions_own_line(tmp_path):
    """The JAX MLP sample multiplies on two lines (``x @ w1``, ``h @ w2``): one op name,
    ``jit(mlp)/dot_general``; the second product's box said the first one's line."""
    root = Path(__file__).resolve().parent.parent
    script = (root / "samples" / "jax_mlp.py").read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(script, 1) if "x @ w1" in line)
    second = next(i for i, line in enumerate(script, 1) if "h @ w2" in line)
    out = tmp_path / "mlp.dot"
    try:
        code = main(["render", str(root / "samples" / "captures" / "jax_mlp"), "--stage", "pre", "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    lines = re.findall(r"dot · op_name: jit\(mlp\)/dot_general · source: samples/jax_mlp\.py:(\d+)", out.read_text())
    assert sorted(map(int, lines)) == [first, second]
