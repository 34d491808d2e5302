"""Mutations of real HLO modules, and the property every parsed input must satisfy.

Shared by the fuzz tests (a small budget on every test run) and `benchmarks/fuzz_parse.py`
(the 100,000-input run). The seeds are real modules: XLA's conformance corpus, the samples'
captures, and HLO TensorFlow wrote in the tests.
"""

from __future__ import annotations

import random
import re
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
    tokens = [m for m in _TOKEN.finditer(data)]
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


_MUTATIONS = (
    _delete_bytes, _duplicate_bytes, _swap_bytes, _flip_byte, _flip_byte, _delete_line, _duplicate_line,
    _swap_lines, _token_edit, _token_edit, _token_edit, _truncate, _splice, _huge_number, _deep_nesting,
    _long_name, _invalid_utf8, _nul,
)


@dataclass
class Outcome:
    """What one input did: parsed, or a clean error; anything else is a failure."""

    parsed: bool
    seconds: float
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


def check_input(data: bytes, *, round_trip: bool = True, downstream: bool = False) -> Outcome:
    """Parse ``data`` and check the contract: a module, or an HloParseError inside the input.

    A parsed module must also print, re-parse and pass the graph self-check; with
    ``downstream`` it must also go through the analyses, the drawing and the diff.
    """
    start = time.perf_counter()
    try:
        module = parse_bytes(data, filename="fuzz.hlo")
    except hloviz.HloParseError as err:
        elapsed = time.perf_counter() - start
        lines = data.split(b"\n")
        if not (1 <= err.line <= len(lines)):
            return Outcome(False, elapsed, f"error line {err.line} outside 1..{len(lines)}")
        width = len(lines[err.line - 1].decode("utf-8", "replace"))
        if not (1 <= err.column <= width + 1):
            return Outcome(False, elapsed, f"error column {err.column} outside 1..{width + 1} on line {err.line}")
        return Outcome(False, elapsed)
    except Exception as err:  # noqa: BLE001 - the point is to catch anything else
        return Outcome(False, time.perf_counter() - start, f"{type(err).__name__}: {err}"[:300])
    try:
        if round_trip:
            text = hloviz.to_text(module)
            again = hloviz.parse(text, filename="printed.hlo")
            if hloviz.to_text(again) != text:
                return Outcome(True, time.perf_counter() - start, "printed text does not round-trip")
            for inst in module.instructions():  # lazily split attributes must split
                inst.attributes  # noqa: B018
        problems = hloviz.check(module)
        if any("cycle" not in str(p) for p in problems):
            return Outcome(True, time.perf_counter() - start, "check(): " + str(problems[0]))
        if downstream and not problems:
            _downstream(module)
    except hloviz.HlovizError:
        pass  # a clean error (e.g. a deferred attribute's positioned parse error) is within the contract
    except Exception as err:  # noqa: BLE001
        return Outcome(True, time.perf_counter() - start, f"after parse: {type(err).__name__}: {err}"[:300])
    return Outcome(True, time.perf_counter() - start)


@dataclass
class Report:
    inputs: int = 0
    parsed: int = 0
    failures: list[tuple[str, bytes]] = field(default_factory=list)
    slowest: float = 0.0
    slowest_input: bytes = b""


def run(count: int, seed: int = 0, *, max_seconds: float = 1.0, downstream: bool = True,
        on_progress=None) -> Report:
    """Mutate ``count`` inputs from the seed corpus and check each; collect failures and the slowest.

    With ``downstream`` every parsed input also goes through stats' analyses, the drawing and
    the diff, all within the 1-second bound."""
    rng = random.Random(seed)
    seeds = seed_corpus()
    report = Report()
    # Modules imported on first use (networkx, for the scope tree of a picture) are a one-time
    # cost, not an input's: one unmutated seed goes through first, untimed.
    check_input(seeds[0], downstream=downstream)
    for k in range(count):
        data = mutate(rng, rng.choice(seeds), seeds)
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
    return report
