"""Mutations of real HLO modules, and the property every parsed input must satisfy.

Shared by the fuzz tests (a small budget on every test run) and `benchmarks/fuzz_parse.py`
(the 100,000-input run). The seeds are real modules: XLA's conformance corpus, the samples'
captures, and HLO TensorFlow wrote in the tests.
"""

from __future__ import annotations

import random
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import hloviz
from hloviz.parser import parse_bytes

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance" / "xla"

_TOKEN = re.compile(rb"%?[A-Za-z_][\w.\-]*|\d+|\S")


def seed_corpus(limit_bytes: int = 200_000) -> list[bytes]:
    """Real modules to mutate: conformance files, sample captures, committed HLO under tests/."""
    paths = sorted(CONFORMANCE.glob("*.hlo")) if CONFORMANCE.exists() else []
    paths += sorted((ROOT / "samples").rglob("*.hlo"))
    paths += sorted((ROOT / "tests").rglob("*.hlo"))
    seeds = []
    for p in paths:
        data = p.read_bytes()
        if len(data) <= limit_bytes:
            seeds.append(data)
    return seeds


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def mutate(rng: random.Random, data: bytes, seeds: list[bytes]) -> bytes:
    """One random mutation (sometimes several stacked) of ``data``."""
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        data = rng.choice(_MUTATIONS)(rng, data, seeds)
    return data


def _delete_bytes(rng, data, _):
    if not data:
        return data
    i = rng.randrange(len(data))
    return data[:i] + data[i + rng.randint(1, 8):]


def _duplicate_bytes(rng, data, _):
    if not data:
        return data
    i = rng.randrange(len(data))
    j = min(len(data), i + rng.randint(1, 16))
    return data[:j] + data[i:j] + data[j:]


def _swap_bytes(rng, data, _):
    if len(data) < 2:
        return data
    b = bytearray(data)
    i, j = rng.randrange(len(b)), rng.randrange(len(b))
    b[i], b[j] = b[j], b[i]
    return bytes(b)


def _flip_byte(rng, data, _):
    if not data:
        return data
    b = bytearray(data)
    b[rng.randrange(len(b))] = rng.choice(b'(){}[],=%"\\:/*\n\t 0123456789-<>?x\x00\xff\xc3')
    return bytes(b)


def _delete_line(rng, data, _):
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def _duplicate_line(rng, data, _):
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return b"\n".join(lines)


def _swap_lines(rng, data, _):
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def _token_edit(rng, data, _):
    tokens = list(_TOKEN.finditer(data))
    if not tokens:
        return data
    a = rng.choice(tokens)
    b = rng.choice(tokens)
    action = rng.randrange(3)
    if action == 0:  # delete a token
        return data[: a.start()] + data[a.end():]
    if action == 1:  # replace a token by another
        return data[: a.start()] + b.group() + data[a.end():]
    return data[: a.start()] + b.group() + b" " + data[a.start():]  # insert


def _truncate(rng, data, _):
    return data[: rng.randrange(len(data) + 1)]


def _splice(rng, data, seeds):
    other = rng.choice(seeds)
    return data[: rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1):]


def _huge_number(rng, data, _):
    numbers = list(re.finditer(rb"\d+", data))
    if not numbers:
        return data
    m = rng.choice(numbers)
    big = rng.choice((b"9" * rng.randint(20, 400), b"-1", b"4294967296", b"1e999", b"0" * 50))
    return data[: m.start()] + big + data[m.end():]


def _deep_nesting(rng, data, _):
    depth = rng.choice((100, 1000, 10000, 100000))
    opener, closer = rng.choice(((b"(", b")"), (b"{", b"}"), (b"[", b"]")))
    i = rng.randrange(len(data) + 1)
    middle = opener * depth + (closer * depth if rng.random() < 0.5 else b"")
    return data[:i] + middle + data[i:]


def _long_name(rng, data, _):
    names = list(re.finditer(rb"%[A-Za-z_][\w.\-]*", data))
    if not names:
        return data
    m = rng.choice(names)
    return data[: m.start()] + b"%" + b"n" * rng.choice((1000, 100000, 1000000)) + data[m.end():]


def _invalid_utf8(rng, data, _):
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80")) + data[i:]


def _nul(rng, data, _):
    i = rng.randrange(len(data) + 1)
    return data[:i] + b"\x00" + data[i:]


_OP_NAME = re.compile(rb'op_name="(?:[^"\\\n]|\\.)*"')
_INSTRUCTION_END = re.compile(rb"^[ \t]+(?:ROOT[ \t]+)?%?[A-Za-z_][\w.\-]*[ \t]*=[^\n]*\)[ \t]*$", re.MULTILINE)
#: Op names nested ``d`` scopes deep, as TF (``a/b/…``) and JAX (transformations around names) write them.
_DEEP_OP_NAMES = (
    lambda d: b"a/" * d + b"neg",
    lambda d: b"gradient_tape/" + b"layer/" * d + b"Mul",
    lambda d: b"jvp(" * d + b"Block" + b")" * d,
    lambda d: b"transpose(jvp(a/" * d + b"op" + b"))" * d,
    lambda d: b"jit(f)/" + b"vmap(a/" * d + b"x" + b")" * d,
    lambda d: b"a/" * d,
)


def _deep_op_name(rng, data, _):
    """An op name nested 64 to 40,000 scopes (or JAX transformations) deep: in place of an op
    name, or as metadata added to an instruction that has none (a 40,000-level name took
    6-8 GB when every scope kept its whole path)."""
    name = rng.choice(_DEEP_OP_NAMES)(rng.choice((63, 64, 65, 1000, 10000, 40000)))[:160_000]  # cut: unbalanced
    found = list(_OP_NAME.finditer(data))
    if found and rng.random() < 0.7:
        m = rng.choice(found)
        return data[: m.start()] + b'op_name="' + name + b'"' + data[m.end():]
    lines = list(_INSTRUCTION_END.finditer(data))
    if not lines:
        return data
    m = rng.choice(lines)
    return data[: m.end()] + b', metadata={op_type="Fuzz" op_name="' + name + b'"}' + data[m.end():]


_ARRAY_INSTRUCTION = re.compile(
    rb"^([ \t]+)(?:ROOT[ \t]+)?(%?)([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*([a-z]\w*\[[\d,]*\](?:\{[\d,]*\})?)[ \t]+[a-z]",
    re.MULTILINE)


def _wide_tuple(rng, data, _):
    """A tuple of 16 to 2,000 operands after an array-shaped instruction: the instruction itself
    repeated, or that many copies of it (a diff of two 40,000-operand ROOT tuples took 106 s)."""
    found = list(_ARRAY_INSTRUCTION.finditer(data))
    if not found:
        return data
    m = rng.choice(found)
    indent, pct, name, shape = m.group(1), m.group(2), m.group(3), m.group(4)
    width = rng.choice((16, 256, 1000, 2000))
    end = data.find(b"\n", m.end())
    end = len(data) if end < 0 else end
    new: list[bytes] = []
    if rng.random() < 0.5:
        operands = [pct + name] * width
    else:
        operands = [b"%sfz%d.%s" % (pct, k, name) for k in range(width)]
        new += [b"%s%s = %s copy(%s%s)" % (indent, o, shape, pct, name) for o in operands]
    new.append(b"%s%sfz.tuple = (%s) tuple(%s)" % (indent, pct, b", ".join([shape] * width), b", ".join(operands)))
    return data[:end] + b"\n" + b"\n".join(new) + data[end:]


_MUTATIONS = (
    _delete_bytes, _duplicate_bytes, _swap_bytes, _flip_byte, _flip_byte, _delete_line, _duplicate_line,
    _swap_lines, _token_edit, _token_edit, _token_edit, _truncate, _splice, _huge_number, _deep_nesting,
    _long_name, _invalid_utf8, _nul, _deep_op_name, _wide_tuple,
)


def _clock() -> float:
    """CPU seconds of this process: what an input costs hloviz, whatever else the machine runs
    (wall time on a shared 2-core machine under load doubled and failed fast inputs)."""
    return time.process_time()


@dataclass
class Outcome:
    """What one input did: parsed, or a clean error; anything else is a failure."""

    parsed: bool
    seconds: float  # CPU seconds (see _clock)
    failure: str | None = None


def _downstream(module: hloviz.HloModule) -> None:
    """What `hloviz stats`, `render` and `diff` do with a module, short of running Graphviz."""
    from hloviz.analysis import analyze
    from hloviz.analysis.diff import diff_modules
    from hloviz.render import ViewOptions, draw_module, to_dot

    analyze(module, module)
    analyze(None, module)
    to_dot(draw_module(module, options=ViewOptions()).scene)
    diff_modules(module, module)


def _round_trip_failure(module: hloviz.HloModule) -> str | None:
    """Why the printed text of a parsed module is not HLO that reads back the same, or None.

    Nothing is excused here: a module hloviz accepted must print as text its own parser takes
    and prints identically. A printer that writes ``control-predecessors={%a)`` fails this.
    """
    try:
        text = hloviz.to_text(module)
    except Exception as err:  # noqa: BLE001 - any failure to print an accepted module is a bug
        return f"printing an accepted module: {type(err).__name__}: {err}"[:300]
    try:
        again = hloviz.parse(text, filename="printed.hlo")
        printed_again = hloviz.to_text(again)
    except Exception as err:  # noqa: BLE001 - HlovizError included: the printed text must parse
        return f"printed text does not parse: {type(err).__name__}: {err}"[:300]
    if printed_again != text:
        return "printed text does not round-trip"
    return None


def check_input(data: bytes, *, round_trip: bool = True, downstream: bool = False) -> Outcome:
    """Parse ``data`` and check the contract: a module, or an HloParseError inside the input.

    A parsed module must also print, re-parse and pass the graph self-check; with
    ``downstream`` it must also go through the analyses, the drawing and the diff.
    """
    start = _clock()
    try:
        module = parse_bytes(data, filename="fuzz.hlo")
    except hloviz.HloParseError as err:
        elapsed = _clock() - start
        lines = data.split(b"\n")
        if not (1 <= err.line <= len(lines)):
            return Outcome(False, elapsed, f"error line {err.line} outside 1..{len(lines)}")
        width = len(lines[err.line - 1].decode("utf-8", "replace"))
        if not (1 <= err.column <= width + 1):
            return Outcome(False, elapsed, f"error column {err.column} outside 1..{width + 1} on line {err.line}")
        return Outcome(False, elapsed)
    except Exception as err:  # noqa: BLE001 - the point is to catch anything else
        return Outcome(False, _clock() - start, f"{type(err).__name__}: {err}"[:300])
    try:
        for inst in module.instructions():  # lazily split attributes must split, or fail cleanly
            inst.attributes  # noqa: B018
            inst.metadata  # noqa: B018
    except hloviz.HlovizError:
        return Outcome(True, _clock() - start)  # a deferred, positioned parse error of the input
    except Exception as err:  # noqa: BLE001
        return Outcome(True, _clock() - start, f"attributes: {type(err).__name__}: {err}"[:300])
    if round_trip:
        failure = _round_trip_failure(module)
        if failure is not None:
            return Outcome(True, _clock() - start, failure)
    try:
        problems = hloviz.check(module)
        if any("cycle" not in str(p) for p in problems):
            return Outcome(True, _clock() - start, "check(): " + str(problems[0]))
        if downstream and not problems:
            _downstream(module)
    except hloviz.HlovizError:
        pass  # a clean error from the self-check or a downstream step is within the contract
    except Exception as err:  # noqa: BLE001
        return Outcome(True, _clock() - start, f"after parse: {type(err).__name__}: {err}"[:300])
    return Outcome(True, _clock() - start)


# --- the command layer ------------------------------------------------------------------------
#
# Some inputs also go through a command as a user would give them: written to a file (plain or
# gz/xz/bz2, sometimes truncated) or into a capture folder with a mutated capture.json, then
# `stats --json`, `render -o x.dot` or `diff` of the seed it came from against it (text, markdown
# or JSON, sometimes drawn). The contract: exit 0 (with strict JSON on stdout where JSON was asked
# for), or exit 2 with one "hloviz: error:" message; never a traceback, an "internal error", or
# another code.

_JSON_MUTATIONS = (
    lambda rng, info: {**info, rng.choice(list(info) or ["x"]): rng.choice(
        [[1, 2], "text", 3, None, {"a": 1}, True, [], {}, -1.5])},
    lambda rng, info: {**info, "source_map": {"add": rng.choice(["x", 1, [1], {"line": "3"}, {"file": 2}])}},
    lambda rng, info: {**info, "tf_ops": rng.choice(["Const", [1], {"a": 1}])},
    lambda rng, info: {**info, "tf_inputs": rng.choice([{"a": "b"}, ["a"], {"a": [1]}])},
)


#: Strings that are valid JSON but hostile as text: lone surrogates (escaped, as JSON allows),
#: terminal escapes, bidi overrides, non-ASCII digits, a number longer than int() converts.
_ODD_TEXT = ("\ud800", "2.17\udfff", "\x1b[2J\x1b]0;x\x07", "\u202egnp.", "٢.١٧", "２", "²", "9" * 5000, "", " ",
             "../../x", "a\x00b")


def _odd_strings(rng: random.Random, value: object) -> object:
    """``value`` (parsed JSON) with some of its strings and keys replaced by :data:`_ODD_TEXT`."""
    if isinstance(value, str):
        return rng.choice(_ODD_TEXT) if rng.random() < 0.3 else value
    if isinstance(value, list):
        return [_odd_strings(rng, v) for v in value]
    if isinstance(value, dict):
        return {(rng.choice(_ODD_TEXT) if rng.random() < 0.1 else k): _odd_strings(rng, v) for k, v in value.items()}
    return value


def mutate_json(rng: random.Random, value: dict, mutations=()) -> bytes:
    """One hostile version of the JSON object ``value`` (a capture.json, an hloviz-env.json, a
    report record): wrong types, odd strings, deep nesting, NaN, cut short, or its bytes mutated
    as HLO text is."""
    import json

    kind = rng.randrange(8)
    if kind == 0 and mutations:
        return json.dumps(rng.choice(mutations)(rng, value)).encode()
    if kind == 1:
        depth = rng.choice((10, 1000, 100_000))
        return b"[" * depth + b"]" * depth
    if kind == 2:
        return re.sub(rb"\b3\b", rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"9" * 400]),
                      json.dumps(value).encode())
    if kind == 3:
        return json.dumps(value).encode()[: rng.randrange(1, 60)]
    if kind == 4:
        return json.dumps(_odd_strings(rng, value)).encode()  # ensure_ascii: surrogates as \\ud800
    if kind == 5:
        return json.dumps(_odd_strings(rng, value), ensure_ascii=False).encode("utf-8", "surrogatepass")
    if kind == 6:
        text = json.dumps(value).encode()
        return mutate(rng, text, [text])
    if kind == 7 and value:
        key = rng.choice(list(value))
        return json.dumps({**value, key: rng.choice([[1, 2], "text", 3, None, {"a": 1}, True, [], {}, -1.5])}).encode()
    return json.dumps(value).encode()


def _capture_json(rng: random.Random) -> bytes:
    info = {"hloviz": "0.1.0", "source": "live", "function": "f", "tensorflow": "2.17.1", "args": ["f32[3]"],
            "source_map": {"add": {"file": "m.py", "line": 3, "function": "f"}},
            "tf_ops": {"add": "AddV2"}, "tf_inputs": {"add": ["x", "y"]}}
    return mutate_json(rng, info, _JSON_MUTATIONS)


def _as_user_file(rng: random.Random, data: bytes, folder: Path) -> Path:
    import bz2
    import gzip
    import lzma

    kind = rng.randrange(6)
    if kind == 5:  # a capture folder
        cap = folder / f"cap{rng.randrange(1 << 30)}"
        cap.mkdir()
        (cap / rng.choice(["pre.hlo", "post.hlo"])).write_bytes(data)
        (cap / "capture.json").write_bytes(_capture_json(rng))
        return cap
    suffix, pack = [(".hlo", None), (".hlo", None), (".gz", gzip.compress), (".xz", lzma.compress),
                    (".bz2", bz2.compress)][kind]
    payload = pack(data) if pack else data
    if pack and rng.random() < 0.3:
        payload = payload[: rng.randrange(len(payload) + 1)]  # truncated archive
    if pack and rng.random() < 0.1:
        payload = bytes(b ^ 0x5A for b in payload[:64]) + payload[64:]  # garbage archive
    path = folder / f"in{rng.randrange(1 << 30)}{'.hlo' if pack else ''}{suffix}"
    path.write_bytes(payload)
    return path


def _command(rng: random.Random, target: Path, folder: Path, original: bytes | None) -> list[str]:
    """The command line for one input: ``diff`` of the unmutated seed (a small one) against it
    in one of the three formats, sometimes drawn; ``render -o x.dot``; or ``stats --json``."""
    pick = rng.random()
    if original is not None and len(original) <= 60_000 and pick < 0.25:
        seed = folder / "seed.hlo"
        seed.write_bytes(original)
        args = ["diff", str(seed), str(target), "--format", rng.choice(["text", "markdown", "json"])]
        return args + (["-o", str(folder / "d.dot")] if rng.random() < 0.3 else [])
    if pick < 0.45:
        return ["render", str(target), "-o", str(folder / "x.dot")]
    return ["stats", "--json", str(target)]


def check_command(rng: random.Random, data: bytes, folder: Path, original: bytes | None = None) -> str | None:
    """Run one command on ``data`` as a user file; the failure, or None when within the contract.
    ``original`` (the seed ``data`` was mutated from) makes ``diff`` one of the commands."""
    import contextlib
    import io
    import json

    from hloviz.cli import main

    target = _as_user_file(rng, data, folder)
    args = _command(rng, target, folder, original)
    strict_json = "--json" in args or "json" in args  # stats --json, diff --format json
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
            code = 0
        except SystemExit as exc:
            code = exc.code
        except BaseException as exc:  # noqa: BLE001 - main must never let anything out
            return f"{args[0]}: escaped main: {type(exc).__name__}: {exc}"[:300]
    stderr = err.getvalue()
    if "Traceback" in stderr or "internal error" in stderr:
        return f"{args[0]}: {stderr.strip().splitlines()[-1] if stderr.strip() else 'traceback'}"[:300]
    if code == 2:
        if stderr.count("hloviz: error:") != 1:
            return f"{args[0]}: exit 2 without exactly one error message: {stderr[:200]!r}"
    elif code == 0:
        if strict_json:
            try:
                json.loads(out.getvalue(), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
            except ValueError as exc:
                return f"{args[0]}: stdout is not strict JSON: {exc}"[:300]
    else:
        return f"{args[0]}: exit code {code}: {stderr[-200:]!r}"
    return None


def _in_main(args: list[str]) -> tuple[int | str | None, str, str] | str:
    """``hloviz ARGS`` in-process: (code, stdout, stderr), or the failure when something escaped."""
    import contextlib
    import io

    from hloviz.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
            code: int | str | None = 0
        except SystemExit as exc:
            code = exc.code
        except BaseException as exc:  # noqa: BLE001 - main must never let anything out
            return f"{args[0]}: escaped main: {type(exc).__name__}: {exc}"[:300]
    return code, out.getvalue(), err.getvalue()


def _contract(args: list[str], result: tuple[int | str | None, str, str] | str) -> str | None:
    if isinstance(result, str):
        return result
    code, _out, stderr = result
    what = " ".join(args[:2])
    if "Traceback" in stderr or "internal error" in stderr:
        return f"{what}: {stderr.strip().splitlines()[-1] if stderr.strip() else 'traceback'}"[:300]
    if code == 2 and stderr.count("hloviz: error:") != 1 and "hloviz: could not delete" not in stderr:
        return f"{what}: exit 2 without exactly one error message: {stderr[:200]!r}"
    if code not in (0, 2):
        return f"{what}: exit code {code}: {stderr[-200:]!r}"
    return None


def _files(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(folder.rglob("*"))}


def check_env_manifest(rng: random.Random, folder: Path) -> str | None:
    """An environment cache whose ``hloviz-env.json`` is mutated, beside a user's folders:
    ``envs list`` (and ``--json``) and ``envs prune`` keep the contract and never touch the
    user's files."""
    import os
    import sys

    from hloviz.capture.releases.source import running_source

    src = running_source()
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    root = folder / f"envs{rng.randrange(1 << 30)}"
    name = f"tf2.17-py{py}-{src.identity}"
    (root / name / "bin").mkdir(parents=True)
    (root / name / "bin" / "python").write_text("")
    (root / ".tmp-thesis").mkdir()
    (root / ".tmp-thesis" / "chapter.tex").write_text("mine\n")
    (root / "notes.txt").write_text("mine\n")
    theirs = {k: v for k, v in _files(root).items() if not k.startswith(name)}
    manifest = {"framework": "tensorflow", "requested": "2.17", "package": "tensorflow-cpu",
                "installed": {"tensorflow": "2.17.1"}, "python": py, "hloviz": src.version,
                "hloviz_source": src.kind, "hloviz_path": str(src.package), "hloviz_identity": src.identity,
                "installer": "uv", "created": "2026-01-01T00:00:00+00:00", "build_seconds": 3}
    (root / name / "hloviz-env.json").write_bytes(mutate_json(rng, manifest))
    previous = os.environ.get("HLOVIZ_ENVS")
    os.environ["HLOVIZ_ENVS"] = str(root)
    try:
        for args in (["envs", "list"], ["envs", "list", "--json"], ["envs", "prune", "--older-than", "1"]):
            failure = _contract(args, _in_main(args))
            if failure:
                return failure
    finally:
        if previous is None:
            os.environ.pop("HLOVIZ_ENVS", None)
        else:
            os.environ["HLOVIZ_ENVS"] = previous
    if {k: v for k, v in _files(root).items() if not k.startswith((name, ".locks"))} != theirs:
        return "envs prune: a file that is not hloviz's changed"
    return None


def check_report_record(rng: random.Random, folder: Path) -> str | None:
    """A report folder whose ``.hloviz-report.json`` is mutated — planted names with their true
    SHA-256 among the mutations — beside the user's files: writing a report there removes or
    changes none of the user's files, and fails only with hloviz's own errors."""
    import hashlib
    import json

    from hloviz.errors import HlovizError
    from hloviz.render.page.files import REPORT_RECORD, write_report_folder

    site = folder / f"site{rng.randrange(1 << 30)}"
    svg = '<?xml version="1.0"?>\n<svg><g><title>hloviz</title></g></svg>\n'
    write_report_folder(site, {"report.html": '<meta name="generator" content="hloviz">\nold', "pre.svg": svg})
    (site / "thesis.tex").write_text("three years\n")
    (site / "post.svg").write_text("<svg>my own drawing</svg>\n")
    record = json.loads((site / REPORT_RECORD).read_text())
    for name in ("thesis.tex", "post.svg", "..", "", "../x", "thesis.tex/"):
        if rng.random() < 0.5 and (site / name).is_file():
            record["files"][name] = [hashlib.sha256((site / name).read_bytes()).hexdigest()]
        elif rng.random() < 0.2:
            record["files"][name] = ["0" * 64]
    (site / REPORT_RECORD).write_bytes(mutate_json(rng, record))
    theirs = {k: v for k, v in _files(site).items() if k in ("thesis.tex", "post.svg")}
    names = rng.choice([["report.html"], ["report.html", "pre.svg"], ["report.html", "post.svg"], ["side-by-side.svg"]])
    try:
        write_report_folder(site, {n: svg if n.endswith(".svg") else '<meta name="generator" content="hloviz">\nnew'
                                   for n in names})
    except HlovizError:
        pass
    except Exception as exc:  # noqa: BLE001 - the point is to catch anything else
        return f"write_report_folder: {type(exc).__name__}: {exc}"[:300]
    if {k: v for k, v in _files(site).items() if k in ("thesis.tex", "post.svg")} != theirs:
        return "show -o: a user's file was removed or changed under a mutated record"
    return None


@dataclass
class Report:
    inputs: int = 0
    parsed: int = 0
    failures: list[tuple[str, bytes]] = field(default_factory=list)
    slowest: float = 0.0
    slowest_input: bytes = b""
    commands: int = 0
    #: Mutated manifests checked: env caches (``hloviz-env.json``) and report records.
    manifests: int = 0


def run(count: int, seed: int = 0, *, max_seconds: float = 1.0, downstream: bool = True,
        on_progress=None, commands_every: int = 0) -> Report:
    """Mutate ``count`` inputs from the seed corpus and check each; collect failures and the slowest.

    With ``downstream`` every parsed input also goes through stats' analyses, the drawing and
    the diff, all within the 1-second bound. With ``commands_every`` N, every Nth input also
    goes through a command (:func:`check_command`)."""
    import shutil
    import tempfile

    rng = random.Random(seed)
    seeds = seed_corpus()
    report = Report()
    folder = Path(tempfile.mkdtemp(prefix="hloviz-fuzz-")) if commands_every else None
    try:
        _run(count, rng, seeds, report, max_seconds, downstream, on_progress, commands_every, folder,
             random.Random(seed + 1))
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return report


def _run(count, rng, seeds, report, max_seconds, downstream, on_progress, commands_every, folder,
         manifest_rng) -> None:
    # The manifests draw from their own generator: the HLO inputs of a seed stay what they were.
    # Modules imported on first use (networkx, for the scope tree of a picture) are a one-time
    # cost, not an input's: one unmutated seed goes through first, untimed.
    check_input(seeds[0], downstream=downstream)
    for k in range(count):
        original = rng.choice(seeds)
        data = mutate(rng, original, seeds)
        if commands_every and k % commands_every == 0:
            report.commands += 1
            failure = check_command(rng, data, folder, original)
            if failure:
                report.failures.append((failure, data))
            report.manifests += 1
            check = check_env_manifest if k % (2 * commands_every) == 0 else check_report_record
            failure = check(manifest_rng, folder)
            if failure:
                report.failures.append((failure, b""))
            for p in folder.iterdir():
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink()
        outcome = check_input(data, downstream=downstream)
        report.inputs += 1
        report.parsed += outcome.parsed
        if outcome.seconds > report.slowest:
            report.slowest, report.slowest_input = outcome.seconds, data
        if outcome.failure:
            report.failures.append((outcome.failure, data))
        elif outcome.seconds > max_seconds:
            report.failures.append((f"took {outcome.seconds:.2f} s", data))
        if on_progress and (k + 1) % 1000 == 0:
            on_progress(report)
