"""Hostile inputs, built small and exactly as a review of hloviz described them.

Shared by the tests (``test_exit_codes.py``, ``test_hostile_growth.py``) and the benchmarks
(``benchmarks/hostile_bench.py``, ``benchmarks/fuzz_parse.py``). Each function returns text or
writes a file; sizes are parameters so tests can build 1×/10×/100× versions.
"""

from __future__ import annotations

import gzip
import json
import lzma
import shutil
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "samples" / "captures" / "fused_additions"

SMALL = """HloModule small, is_scheduled=true

%fused_computation (p0: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p0), metadata={op_type="Neg" op_name="neg"}
}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %f = f32[4]{0} fusion(%p), kind=kLoop, calls=%fused_computation
}
"""


def nested_fusions(depth: int) -> str:
    """Fusions nested ``depth`` deep: each fused computation holds a fusion of the next."""
    out = ["HloModule deep_fusions, is_scheduled=true", "",
           "%c0 (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n  ROOT %r = f32[4]{0} negate(%p)\n}\n"]
    for k in range(1, depth):
        out.append(f"%c{k} (p: f32[4]) -> f32[4] {{\n  %p = f32[4]{{0}} parameter(0)\n"
                   f"  ROOT %r = f32[4]{{0}} fusion(%p), kind=kLoop, calls=%c{k - 1}\n}}\n")
    out.append(f"ENTRY %main (p: f32[4]) -> f32[4] {{\n  %p = f32[4]{{0}} parameter(0)\n"
               f"  ROOT %r = f32[4]{{0}} fusion(%p), kind=kLoop, calls=%c{depth - 1}\n}}\n")
    return "\n".join(out)


def nested_calls(depth: int, opcode: str = "call") -> str:
    """``call``s (or ``while``s) nested ``depth`` deep."""
    out = ["HloModule deep_calls, is_scheduled=true", "",
           "%cond (p: f32[4]) -> pred[] {\n  %p = f32[4]{0} parameter(0)\n  ROOT %c = pred[] constant(false)\n}\n",
           "%b0 (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n  ROOT %r = f32[4]{0} negate(%p)\n}\n"]

    def op(callee: str) -> str:
        if opcode == "while":
            return f"while(%p), condition=%cond, body={callee}"
        return f"call(%p), to_apply={callee}"

    for k in range(1, depth):
        out.append(f"%b{k} (p: f32[4]) -> f32[4] {{\n  %p = f32[4]{{0}} parameter(0)\n"
                   f"  ROOT %r = f32[4]{{0}} {op(f'%b{k - 1}')}\n}}\n")
    out.append(f"ENTRY %main (p: f32[4]) -> f32[4] {{\n  %p = f32[4]{{0}} parameter(0)\n"
               f"  ROOT %r = f32[4]{{0}} {op(f'%b{depth - 1}')}\n}}\n")
    return "\n".join(out)


def big_shape(rank: int, size: int = 2147483647, scheduled: bool = True) -> str:
    """One array shape of ``rank`` dimensions of ``size`` each (its element count overflows int64)."""
    dims = ",".join([str(size)] * rank)
    head = "HloModule big, is_scheduled=true" if scheduled else "HloModule big"
    return (f"{head}\n\nENTRY %main (p: f32[{dims}]) -> f32[{dims}] {{\n  %p = f32[{dims}] parameter(0)\n"
            f"  ROOT %n = f32[{dims}] negate(%p)\n}}\n")


def long_op_name(chars: int, escapes: bool = False) -> str:
    """A valid module whose one op_name is ``chars`` characters long (the backtracking case)."""
    name = ('a\\"b' * (chars // 4)) if escapes else "x" * chars
    return SMALL.replace('op_name="neg"', f'op_name="{name}"')


def metadata_word(chars: int) -> str:
    """A valid module whose metadata holds one ``chars``-long word without ``=`` (a fuzz finding:
    the key pattern ran to the word's end from each of its characters, 50 s for 143 KB)."""
    return SMALL.replace('op_name="neg"', f'op_name="neg" {"w" * chars}')


def long_line(chars: int) -> str:
    """A valid module with one ``chars``-long line (a backend_config string)."""
    return SMALL.replace("kind=kLoop,", f'kind=kLoop, backend_config="{"y" * chars}",')


def many_operands(n: int, shaped: bool = False) -> str:
    """One instruction with ``n`` operands on its line (``f32[] %p`` each when ``shaped``, as TF
    <= 2.17 prints them)."""
    ops = ", ".join(["f32[] %p" if shaped else "%p"] * n)
    return ("HloModule m, is_scheduled=true\n\nENTRY %e (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n"
            f'  ROOT %c = f32[] custom-call({ops}), custom_call_target="x"\n}}\n')


def deep_scope(levels: int) -> str:
    """A valid module whose one op name is ``a/`` ``levels`` times, then ``neg`` (a review's
    40,000 levels, a 276-byte ``.hlo.gz``, cost 6-8 GB in render, show, stats --by scope and
    diff -o when every scope kept its whole path; 1,500 broke the recursion limit)."""
    return SMALL.replace('op_name="neg"', f'op_name="{"a/" * levels}neg"')


#: Between the two modules of a :func:`wide_root_pair` text.
PAIR_SEPARATOR = "// ---- the second module ----\n"


def wide_root(width: int, differ: bool = False) -> str:
    """A module whose ROOT tuple has ``width`` operands, each its own ``negate`` of the
    parameter; with ``differ``, every second one is an ``exponential`` instead."""
    lines = ["HloModule wide, is_scheduled=true", "", "ENTRY %main (p: f32[4]) -> f32[4] {",
             "  %p = f32[4]{0} parameter(0)"]
    for k in range(width):
        op = "exponential" if differ and k % 2 else "negate"
        lines.append(f"  %i{k} = f32[4]{{0}} {op}(%p)")
    shapes = ", ".join(["f32[4]{0}"] * width)
    lines.append(f"  ROOT %t = ({shapes}) tuple({', '.join(f'%i{k}' for k in range(width))})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def wide_root_pair(width: int) -> str:
    """The two modules a review diffed (40,000 operands, half differing, took 106 s in diff where
    stats took 0.45 s): :func:`wide_root` with and without ``differ``, as one text split at
    :data:`PAIR_SEPARATOR`."""
    return wide_root(width) + PAIR_SEPARATOR + wide_root(width, differ=True)


def blank_lines(n: int) -> str:
    """A valid module followed by ``n`` blank lines (the stage guess scanned them quadratically)."""
    return SMALL.replace("is_scheduled=true", "") + "\n" * n


def rank_of_ones(rank: int) -> str:
    """A legal module whose shapes have ``rank`` dimensions of size 1 (linear, not refused)."""
    dims = ",".join(["1"] * rank)
    return (f"HloModule ones, is_scheduled=true\n\nENTRY %main (p: f32[{dims}]) -> f32[{dims}] {{\n"
            f"  %p = f32[{dims}] parameter(0)\n  ROOT %n = f32[{dims}] negate(%p)\n}}\n")


def dense(instructions: int = 290, operands: int = 40) -> str:
    """Many instructions, each taking ``operands`` earlier ones (Graphviz's slow case)."""
    out = ["HloModule dense, is_scheduled=true", "", "ENTRY %main (p: f32[4]) -> f32[4] {",
           "  %i0 = f32[4]{0} parameter(0)"]
    for k in range(1, instructions):
        ops = ", ".join(f"%i{(k * 7 + j * 13) % k}" for j in range(min(operands, k)))
        out.append(f"  %i{k} = f32[4]{{0}} custom-call({ops}), custom_call_target=\"t{k % 5}\"")
    out.append(f"  ROOT %out = f32[4]{{0}} copy(%i{instructions - 1})")
    out.append("}")
    return "\n".join(out) + "\n"


def capture_with(folder: Path, **changes) -> Path:
    """A copy of the seed capture whose capture.json has ``changes`` (raw JSON text for ``raw``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("pre.hlo", "post.hlo"):
        shutil.copy(SEED / name, folder / name)
    raw = changes.pop("raw", None)
    if raw is None:
        info = json.loads((SEED / "capture.json").read_text())
        info.update(changes)
        raw = json.dumps(info)
    (folder / "capture.json").write_text(raw)
    return folder


def truncated(path: Path, kind: str) -> Path:
    """The seed's post.hlo, compressed with ``kind`` (gz, xz), cut in half."""
    data = (SEED / "post.hlo").read_bytes()
    packed = gzip.compress(data) if kind == "gz" else lzma.compress(data)
    path.write_bytes(packed[: len(packed) // 2])
    return path


def bomb(path: Path, inflated: int) -> Path:
    """A ``.gz`` of a small module followed by ``inflated`` bytes of blank lines."""
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(SMALL.encode())
        chunk = b"\n" * (1 << 20)
        left = inflated
        while left > 0:
            f.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)
    return path


# --- text of short lines: what a list of every line cost ------------------------------------

#: shape name → builder of about ``n`` characters of text made of short lines or tokens. Before
#: lines were split a block at a time, 50 MB of each cost from 477 MB (blank lines) to 10 GB
#: (``ab`` lines) and up to 80 s, mostly in a list of every line and a list of every token.
SHORT_LINE_SHAPES = {
    "blank_lines_after": lambda n: SMALL + "\n" * n,
    "blank_lines_before": lambda n: "\n" * n + SMALL,
    "space_lines": lambda n: SMALL + "  \n" * (n // 3),
    "comment_lines": lambda n: SMALL + "//\n" * (n // 3),
    "brace_lines": lambda n: "}\n" * (n // 2),
    "word_lines": lambda n: "ab\n" * (n // 3),
    "words_after_module": lambda n: SMALL + "a " * (n // 2),
    "open_brackets": lambda n: "( " * (n // 2),
    "open_bracket_lines": lambda n: "(\n" * (n // 2),
    "header_never_closed": lambda n: "HloModule m, a={" + "x,\n" * (n // 3),
    "header_commas": lambda n: "HloModule m,\n" + ",\n" * (n // 2),
    "attribute_never_closed": lambda n: "ENTRY e {\n  p = f32[] parameter(0), a={" + "1,\n" * (n // 3),
}


# --- the work of shapes that are not about parsing ------------------------------------------


def scope_work(text: str, folder: Path) -> None:
    """What a user does with a deeply scoped module: ``stats --by scope``, ``render -o x.html``
    (the explorer numbers every scope), and ``diff -o d.html`` of the module with itself."""
    from hloviz import api

    path = folder / "input.hlo"
    path.write_text(text)
    api.stats(str(path), by="scope")
    api.render(str(path), folder / "x.html")
    api.diff(str(path), str(path)).save_picture(folder / "d.html")


def diff_work(text: str, folder: Path) -> None:
    """``diff A B`` of a :func:`wide_root_pair` text: the matcher and every report."""
    from hloviz import api

    first, second = text.split(PAIR_SEPARATOR)
    a, b = folder / "a.hlo", folder / "b.hlo"
    a.write_text(first)
    b.write_text(second)
    result = api.diff(str(a), str(b))
    result.to_text(limit=0)
    result.to_markdown(limit=0)
    result.to_dict()


# --- growth: 1×/10×/100× of each hostile shape ---------------------------------------------

#: shape name → (builder of the text for a size, the 1× size, whether the module is drawn too —
#: or the function that does the shape's work instead of stats and render).
GROWTH_SHAPES = {
    "op_name": (lambda n: long_op_name(n), 20_000, True),
    "op_name_escapes": (lambda n: long_op_name(n, escapes=True), 8_000, True),
    "long_line": (lambda n: long_line(n), 20_000, True),
    "blank_lines": (lambda n: nested_calls(3).replace(", is_scheduled=true", "") + "\n" * n, 2_000, False),
    "comments": (lambda n: SMALL + "// " + "/*" * n + "\n/* a */ /* b\n" * n + " */\n", 300, False),
    # one line of comment openers closed at its end (each "/*" scanned to the "*/" was quadratic)
    "comment_openers_on_a_line": (lambda n: SMALL + "/* " * n + "*/\n", 3_000, False),
    # a long last line without a newline (the row scan tried it from every character: a fuzz finding)
    "long_last_line": (lambda n: "HloModule m\n\nENTRY %e {\n  %p = f32[] parameter(0)\n  ROOT %" + "n" * n, 500, False),
    "rank_of_ones": (lambda n: rank_of_ones(n), 250, True),
    "many_operands": (lambda n: many_operands(n), 500, False),
    "many_shaped_operands": (lambda n: many_operands(n, shaped=True), 100, False),
    "nested_fusions": (lambda n: nested_fusions(n), 10, False),
    "nested_calls": (lambda n: nested_calls(n), 10, False),
    "metadata_word": (lambda n: metadata_word(n), 500, True),
    "header_never_closed": (SHORT_LINE_SHAPES["header_never_closed"], 3_000, False),
    "attribute_never_closed": (SHORT_LINE_SHAPES["attribute_never_closed"], 3_000, False),
    "deep_scope": (lambda n: deep_scope(n), 150, scope_work),
    "wide_diff": (lambda n: wide_root_pair(n), 60, diff_work),
}
#: Shapes whose work draws with Graphviz (their growth tests need ``dot``).
NEEDS_DOT = frozenset({"deep_scope"})


def growth_work(text: str, draw: bool | Callable[[str, Path], None], folder: Path) -> None:
    """What a user's command does with the text: read the file, stats (parse, stage guess,
    analyses, source map from frame tables) and, for ``draw``, the DOT of the picture."""
    from hloviz import api
    from hloviz.errors import HloParseError

    if callable(draw):  # a shape with work of its own
        draw(text, folder)
        return
    path = folder / "input.hlo"
    path.write_text(text)
    try:
        api.stats(str(path))
    except HloParseError:  # text that is not HLO: what counts is what finding that out cost
        return
    if draw:
        api.render(str(path), fmt="dot")


def growth(name: str, folder: Path, factors=(1, 10, 100), repeat: int = 3,
           settled: Callable[[dict[int, tuple[float, int]]], bool] | None = None) -> dict[int, tuple[float, int]]:
    """factor → (best CPU seconds of up to ``repeat`` runs, peak traced bytes) for one shape.

    Each size is timed once; the sizes are timed again (the best time of each kept, up to
    ``repeat`` runs) only while ``settled`` says the figures are not yet good enough (noise only
    ever adds CPU time, so a best-of-three is what a failure is judged on). The peak of traced
    memory is taken at the smallest and largest size (the middle one is mostly fixed costs).
    """
    import gc
    import time
    import tracemalloc

    build, base, draw = GROWTH_SHAPES[name]
    texts = {f: build(base * f) for f in factors}
    best = dict.fromkeys(factors, float("inf"))
    peaks = dict.fromkeys(factors, 0)
    # What the test process already holds (other tests' captures, a pytest heap of a gigabyte
    # late in the suite) is frozen out of the collector: each gc.collect() below, and the ones
    # the work triggers, then walk only what this shape made — the figures measure the shape,
    # not the suite's history (a full collection of that heap took seconds under load).
    gc.collect()
    gc.freeze()
    try:
        growth_work(texts[factors[0]], draw, folder)  # imports and first-use caches, not timed
        for _ in range(repeat):
            for f in factors:
                gc.collect()
                started = time.process_time()
                growth_work(texts[f], draw, folder)
                best[f] = min(best[f], time.process_time() - started)
            if settled is not None and settled({f: (best[f], 0) for f in factors}):
                break
        for f in (factors[0], factors[-1]):
            gc.collect()
            tracemalloc.start()
            growth_work(texts[f], draw, folder)
            peaks[f] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    finally:
        gc.unfreeze()
    return {f: (best[f], peaks[f]) for f in factors}
