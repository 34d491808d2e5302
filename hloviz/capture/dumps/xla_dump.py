"""Read an XLA dump folder (``XLA_FLAGS=--xla_dump_to=DIR``).

XLA writes each compiled module as ``module_NNNN.NAME.before_optimizations.txt`` and
``module_NNNN.NAME.[PLATFORM_]after_optimizations.txt`` (``cpu_``, ``sm_9.0_gpu_``, or no
prefix in older versions), or as binary ``HloProto``s ``...optimizations.hlo.pb`` with
``--xla_dump_hlo_as_proto`` (text is read when both exist), next to many other files (buffer assignment, LLVM IR, ...) that
hloviz ignores. A module is picked by name (``jit_mlp``), by number (``0003``,
``module_0003``), or by a glob/substring pattern; when the choice is ambiguous the error
lists the modules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hloviz.capture.dumps.module_choice import PLATFORM_PREFIX, number_key, pick
from hloviz.errors import InputError

# Text (".txt") or, with --xla_dump_hlo_as_proto, a binary HloProto (".hlo.pb"), maybe compressed.
_STAGE_FILE = r"(\.txt|\.hlo\.pb)(\.gz|\.xz)?$"
_BEFORE = re.compile(r"^module_([0-9]+)\.(.+)\.before_optimizations" + _STAGE_FILE)
# NAME, then an optional platform prefix such as ``cpu_`` or ``sm_9.0a_gpu_``.
_AFTER = re.compile(r"^module_([0-9]+)\.(.+?)\.(" + PLATFORM_PREFIX + r")?after_optimizations" + _STAGE_FILE)
_ANY = re.compile(r"^module_([0-9]+)\.")


@dataclass(frozen=True)
class DumpModule:
    """One module of a dump: its number, name and the two stage files (either may be missing)."""

    number: str
    name: str
    before: Path | None
    after: Path | None

    @property
    def label(self) -> str:
        return f"module_{self.number}.{self.name}"


def is_dump_folder(folder: Path) -> bool:
    return folder.is_dir() and any(_BEFORE.match(p.name) or _AFTER.match(p.name) for p in folder.iterdir())


def _preferred(a: Path | None, b: Path) -> Path:
    """Of two files of one stage, text before a proto (no jaxlib needed), plain before compressed."""
    if a is None:
        return b
    return min(a, b, key=lambda p: (p.name.endswith((".pb", ".pb.gz", ".pb.xz")), len(p.name)))


def list_modules(folder: Path) -> list[DumpModule]:
    """The modules found in ``folder``, by number."""
    befores: dict[str, tuple[str, Path]] = {}
    afters: dict[str, list[tuple[str, Path]]] = {}
    for p in sorted(folder.iterdir()):
        if not p.is_file():
            continue
        m = _BEFORE.match(p.name)
        if m:
            previous = befores.get(m.group(1))
            befores[m.group(1)] = (m.group(2), _preferred(previous[1] if previous else None, p))
            continue
        m = _AFTER.match(p.name)
        if m:
            afters.setdefault(m.group(1), []).append((m.group(2), p))
    modules = []
    for number in sorted(set(befores) | set(afters), key=number_key):
        name, before = befores.get(number, ("", None))
        candidates = afters.get(number, [])
        if name:
            candidates = [(n, p) for n, p in candidates if n == name]
        after = min(candidates, key=lambda np: (np[1].name.endswith((".pb", ".pb.gz", ".pb.xz")),
                                                len(np[1].name)))[1] if candidates else None
        if not name and candidates:
            name = candidates[0][0]
        modules.append(DumpModule(number, name, before, after))
    return modules


def pick_module(folder: Path, choice: str | None) -> DumpModule:
    """The module ``choice`` names (see the module docstring); ``None`` when there is one."""
    modules = list_modules(folder)
    if not modules:
        raise InputError(f"{folder} holds no module_*.before_optimizations.txt or *after_optimizations.txt files "
                         "(nor .hlo.pb protos)",
                         hint="make a dump with XLA_FLAGS=--xla_dump_to=DIR")
    listing = "\n".join(f"  {m.label}" + ("" if m.before and m.after else
                                          f"  ({'pre only' if m.before else 'post only'})") for m in modules)
    if choice is None:
        if len(modules) == 1:
            return modules[0]
        raise InputError(f"{folder} holds {len(modules)} modules; pick one with --module NAME (a name, "
                         f"number or pattern):\n{listing}")
    return pick(modules, choice, folder=folder, listing=listing)


def memory_files(folder: Path, module: DumpModule) -> dict | None:
    """The dump's buffer-assignment files of ``module`` (None when XLA wrote none): TensorFlow's
    one ``*after_optimizations-buffer-assignment.txt``, or JAX's three (``-buffer-assignment.txt``,
    ``-buffer-assignment-values.txt``, ``-live-range.txt``); or, for a module dumped only as a
    binary ``HloProto`` (``.hlo.pb``), that proto, which carries the assignment."""
    if module.after is None:
        return None
    if module.after.name.endswith((".hlo.pb", ".hlo.pb.gz", ".hlo.pb.xz")):
        text_twin = folder / re.sub(r"\.hlo\.pb(\.gz|\.xz)?$", ".txt", module.after.name)
        if not text_twin.is_file():  # --xla_dump_hlo_as_proto: the HloProto carries the assignment
            return {"proto": str(module.after)}
    stem = re.sub(r"(\.txt|\.hlo\.pb)(\.gz|\.xz)?$", "", module.after.name)
    found = {}
    for key, suffix in (("assignment", "-buffer-assignment.txt"), ("values", "-buffer-assignment-values.txt"),
                        ("live", "-live-range.txt")):
        for path in (folder / (stem + suffix), folder / (stem + suffix + ".gz")):
            if path.is_file():
                found[key] = str(path)
                break
    return found if "assignment" in found else None
