"""Shared inputs and measuring helpers for the benchmark scripts.

Inputs:

* :func:`ensure_large_module` — the optimized HLO of a deep transformer training step (JAX, CPU,
  250 unrolled layers; about 310k instructions and 42 MB of text), generated once by
  ``benchmarks/_gen_transformer.py`` in a subprocess and cached under ``build/bench/``.
* :func:`ensure_second_large_module` — the same model at another width, for the diff benchmark.
* :func:`transformer_captures` — the two-version transformer training-step captures in
  ``samples/captures/`` (made by ``hloviz versions … --save samples/captures``, see samples/README.md).

Measuring: :func:`measure_parse` runs one parser in a fresh Python process
(``benchmarks/_parse_child.py``) and returns its timings and its memory, read from the kernel
(RSS), because tracemalloc cannot see what a C++ parser allocates.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Windows: no lock, at worst two runs compile the same module
    fcntl = None  # type: ignore[assignment]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BENCH_DIR = REPO / "build" / "bench"
CAPTURES = REPO / "samples" / "captures"

sys.path.insert(0, str(HERE))
from _gen_transformer import count_instructions  # noqa: E402  (no JAX import at module level)

#: Settings of the large module. 250 layers is the smallest depth that gives ≥ 300k
#: instructions and ≥ 40 MB (measured: ~1250 instructions and ~170 kB of text per layer).
LARGE = {"arch": "llama", "layers": 250, "width": 64}
#: The second large module for the diff benchmark: same depth, other width (other shapes).
LARGE_B = {"arch": "llama", "layers": 250, "width": 96}


class BenchError(SystemExit):
    """A missing prerequisite: printed as one line, exit status 2."""

    def __init__(self, message: str) -> None:
        super().__init__(f"error: {message}")


def module_path(arch: str, layers: int, width: int) -> Path:
    return BENCH_DIR / f"transformer-{arch}-L{layers}-w{width}.hlo"


def ensure_module(arch: str, layers: int, width: int) -> Path:
    """The cached module of these settings; compiled with JAX (a few minutes) when missing."""
    path = module_path(arch, layers, width)
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    # Several benchmark runs may start at once on a shared machine: one compiles, the others
    # wait for it (an advisory lock beside the file) instead of compiling the same module again.
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        if fcntl is not None and not _try_lock(lock):
            print(f"waiting for another process that is generating {path.name} ...", file=sys.stderr, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file():
            return path
        return _generate(path, arch, layers, width)


def _try_lock(f) -> bool:
    """Take the lock without waiting; False when another process holds it (True where
    there is no fcntl: no lock to wait for)."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _generate(path: Path, arch: str, layers: int, width: int) -> Path:
    if importlib.util.find_spec("jax") is None:
        raise BenchError(f"{path} is missing and JAX is not installed to generate it; "
                         "install jax (pip install 'hloviz[bench]') or copy the file there")
    print(f"generating {path.relative_to(REPO)}: a JAX compile of a {layers}-layer training step, "
          "done once (250 layers took 7 minutes on 2 busy cores) ...", file=sys.stderr, flush=True)
    cmd = [sys.executable, str(HERE / "_gen_transformer.py"), str(path), "--arch", arch,
           "--layers", str(layers), "--width", str(width)]
    env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3")  # not even the slow-compile alarm
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0 or not path.is_file():
        raise BenchError(f"generating {path} failed (exit {done.returncode})")
    return path


def ensure_large_module() -> Path:
    """The ≥ 300k-instruction, ≥ 40 MB module the parse benchmark reads."""
    return ensure_module(**LARGE)


def ensure_second_large_module() -> Path:
    return ensure_module(**LARGE_B)


def describe(path: Path) -> tuple[int, int]:
    """(bytes, instruction lines) of an HLO text file, counted from the text itself."""
    data = path.read_bytes()
    return len(data), count_instructions(data.decode("utf-8"))


def transformer_captures() -> list[Path]:
    """post.hlo of every ``transformer_train-tf*`` capture, oldest TF version first."""
    def version(p: Path) -> tuple[int, ...]:
        tail = p.parent.name.rsplit("-tf", 1)[-1]
        return tuple(int(x) if x.isdigit() else 0 for x in tail.split("."))

    return sorted(CAPTURES.glob("transformer_train-tf*/post.hlo"), key=version)


def have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def have_hloviz() -> bool:
    return have("hloviz") or (REPO / "hloviz" / "__init__.py").is_file()


def have_xla() -> bool:
    return have("jaxlib")


@dataclass
class Measured:
    parser: str
    times: list[float]           # seconds of each parse, first one in a fresh process
    peak_added: int              # bytes: peak RSS during the first parse minus RSS before it
    retained: int                # bytes: RSS with only the parsed module alive, minus RSS before
    computations: int
    instructions: int
    baseline: int                # bytes: RSS after imports, before the first parse
    cpu_times: list[float] = field(default_factory=list)  # CPU seconds of each parse (the process's)

    @classmethod
    def combine(cls, runs: list[Measured]) -> Measured:
        """One record of several processes: every time; the median of the memory figures."""
        def med(xs: list[int]) -> int:
            return sorted(xs)[len(xs) // 2]

        first = runs[0]
        return cls(first.parser, [t for r in runs for t in r.times], med([r.peak_added for r in runs]),
                   med([r.retained for r in runs]), first.computations, first.instructions,
                   med([r.baseline for r in runs]), [t for r in runs for t in r.cpu_times])

    @property
    def best(self) -> float:
        return min(self.times)

    @property
    def median(self) -> float:
        s = sorted(self.times)
        mid = len(s) // 2
        return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def measure_parse(parser: str, path: Path, repeats: int, repo: Path = REPO) -> Measured:
    """Parse ``path`` ``repeats`` times with ``parser`` (``hloviz`` or ``xla``) in a new process
    (``repo``: the checkout whose hloviz it imports)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(HERE / "_parse_child.py"), parser, str(path), str(repeats)],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"the {parser} parse of {path.name} failed (exit {done.returncode}):\n{tail}")
    return Measured(**json.loads(done.stdout.strip().splitlines()[-1]))


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"
