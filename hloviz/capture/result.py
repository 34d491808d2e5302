"""What a capture is: :class:`Capture`, the pre- and post-optimization HLO text of one function
and where it came from, and the ``info`` every capture starts with.

In: HLO text and ``capture.json``'s mapping (from a live function, a saved folder, a dump or a
file). Out: the modules parsed on demand, the typed :class:`~hloviz.capture.info.CaptureInfo`,
XLA's memory record. Every way of getting HLO (:mod:`hloviz.capture`, :mod:`.in_process`,
:mod:`.child`, :mod:`.isolated`) makes one; it imports none of them.
"""

from __future__ import annotations

import datetime as _dt
import platform as _platform
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hloviz.capture.info import CaptureInfo

if TYPE_CHECKING:
    from hloviz.ir import HloModule

__all__ = ["STAGES", "Capture", "base_info", "hloviz_version"]

STAGES = ("pre", "post")


@dataclass
class Capture:
    """Pre- and post-optimization HLO text of one function, and where it came from.

    ``info`` is what ``capture.json`` holds: versions (hloviz, TensorFlow or JAX, Python), device
    and platform, function and file, argument specs, time, and ``source_map`` — TF op name →
    ``{"file", "line", "function"}`` of the user's own frame that created the op. It is checked
    when the capture is made (a wrong type is an :class:`~hloviz.errors.InputError` naming the
    key); :attr:`capture_info` is the same as a typed :class:`CaptureInfo`.
    """

    pre_text: str | None
    post_text: str | None
    info: dict
    label: str
    #: Names used in parse errors (the file a text was read from, or ``<label> pre``).
    pre_filename: str | None = None
    post_filename: str | None = None
    #: XLA's own buffer assignment for the optimized module, as ``memory.json`` keeps it
    #: (:meth:`hloviz.analysis.memory.XlaAssignment.to_dict`), or the dump files to read it from
    #: (``{"assignment": path, "values": path, "live": path}``); None when XLA's record was not read.
    memory: dict | None = None
    _modules: dict = field(default_factory=dict, repr=False, compare=False)
    _typed_info: CaptureInfo = field(init=False, repr=False, compare=False)
    #: ``info`` as :meth:`CaptureInfo.from_dict` checked it already (a saved capture's
    #: capture.json, checked as it was read), so it is not checked twice.
    checked: InitVar[CaptureInfo | None] = None

    def __post_init__(self, checked: CaptureInfo | None) -> None:
        self._typed_info = checked if checked is not None else CaptureInfo.from_dict(self.info,
                                                                                      where=self._info_where())

    def _info_where(self) -> str:
        """The capture.json a saved capture's info came from, for error messages."""
        for name in (self.pre_filename, self.post_filename):
            if name and not name.startswith("<"):
                candidate = Path(name).with_name("capture.json")
                if candidate.is_file():
                    return str(candidate)
        return f"the capture info of {self.label}"

    @classmethod
    def from_module(cls, module: HloModule, label: str | None = None) -> Capture:
        """A capture around an already parsed module (no text): its stage is ``post`` when the
        module is scheduled (XLA's pipeline ran), else ``pre``."""
        cap = cls(None, None, {"source": "module"}, label or module.name)
        cap._modules["post" if module.is_scheduled else "pre"] = module
        return cap

    @property
    def capture_info(self) -> CaptureInfo:
        """:attr:`info` as a typed, checked :class:`CaptureInfo`."""
        return self._typed_info

    def module(self, stage: str) -> HloModule | None:
        """The ``"pre"`` or ``"post"`` module, parsed on first use (None when this capture lacks it)."""
        if stage == "pre":
            return self.pre_module()
        if stage == "post":
            return self.post_module()
        raise ValueError(f"stage must be 'pre' or 'post', not {stage!r}")

    def has(self, stage: str) -> bool:
        """Whether this capture holds the ``stage`` module (as text or as a parsed module)."""
        text = self.pre_text if stage == "pre" else self.post_text
        return text is not None or self._modules.get(stage) is not None

    def _module(self, stage: str, text: str | None, filename: str | None) -> HloModule | None:
        if text is None:
            return self._modules.get(stage)  # a capture made around a module (from_module)
        if stage not in self._modules:
            from hloviz import parse  # the parser is imported only when a module is needed

            self._modules[stage] = parse(text, filename=filename or f"<{self.label} {stage}>")
        return self._modules[stage]

    def pre_module(self) -> HloModule | None:
        """The pre-optimization module, parsed on first use (None when this capture lacks it)."""
        return self._module("pre", self.pre_text, self.pre_filename)

    def post_module(self) -> HloModule | None:
        """The post-optimization module, parsed on first use (None when this capture lacks it)."""
        return self._module("post", self.post_text, self.post_filename)

    def modules(self) -> tuple[HloModule | None, HloModule | None]:
        """The pre- and post-optimization modules, parsed on first use one after the other
        (the collector's work between the two parses is done once: :func:`hloviz.collector.one_thaw`)."""
        from hloviz.collector import one_thaw

        with one_thaw():
            pre, post = self.pre_module(), self.post_module()
        if pre is not None and post is not None and pre.name and post.name and pre.name != post.name:
            from hloviz.errors import InputError

            # XLA keeps the module's name through its passes: two names are two compiles, and
            # every "folded" and "eliminated" said of one against the other would be false
            raise InputError(f"{self.label}: the pre-optimization module is {pre.name} and the optimized one "
                             f"{post.name}: not the two stages of one compile",
                             hint="give the HLO before and after optimization of one function (hloviz dump "
                                  "writes both; XLA's dumps name them module_N.NAME.before_optimizations.txt "
                                  "and …after_optimizations.txt)")
        if pre is not None and post is not None:
            from hloviz.analysis.pre_post.names import pair

            pair(pre, post)  # the optimized module's scopes named as the program named them
        return pre, post

    def xla_memory(self):  # -> XlaAssignment | None
        """XLA's buffer assignment (:class:`hloviz.analysis.memory.XlaAssignment`), read on first
        use; None when the capture has none. A damaged record is an :class:`InputError`."""
        if self.memory is None:
            return None
        if "xla" not in self._modules:
            from hloviz.capture.memory import read_memory

            self._modules["xla"] = read_memory(self.memory, self.label)
        return self._modules["xla"]

    @property
    def source_map(self) -> dict:
        return self.info.get("source_map") or {}


def hloviz_version() -> str:
    try:
        from hloviz import __version__  # type: ignore[attr-defined]

        return str(__version__)
    except ImportError:
        try:
            from importlib.metadata import version

            return version("hloviz")
        except Exception:  # noqa: BLE001 - not installed as a distribution
            return "unknown"


def base_info(kind: str) -> dict:
    return {
        "hloviz": hloviz_version(),
        "python": _platform.python_version(),
        "machine": _platform.platform(),
        "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": kind,
    }
