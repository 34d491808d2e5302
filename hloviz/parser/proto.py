"""Binary HLO protos (``*.pb``, ``*.hlo.pb``, and ``.gz``/``.xz``/``.bz2`` of them) → HLO text.

XLA writes binary protos when asked (``--xla_dump_hlo_as_proto`` dumps ``HloProto``s, tools and
test data hold ``HloModuleProto``s, HLO snapshots wrap an ``HloProto``). hloviz does not decode
XLA's instruction protos itself: it finds the ``HloModuleProto`` inside the wrapper (a few
lines of protobuf wire format, below) and lets XLA's own code, as jaxlib ships it, turn that
into HLO text, which then goes through the ordinary parser. jaxlib is imported only here, and
only when a proto is read; without it the error says what to install. (TensorFlow's wheel
ships the proto message classes, ``hlo_pb2``, but not XLA's proto-to-module code, so with
TensorFlow alone a proto would have to be rebuilt instruction by instruction in Python; hloviz
does not do that.)
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import cast

from ..errors import DependencyError, InputError
from ..inputs import COMPRESSED, read_bytes
from .wire import read_message

INSTALL_HINT = "pip install 'hloviz[jax]'  (jaxlib ships XLA's HLO proto support)"
# HloProto keeps the module in field 1 (HloSnapshot keeps an HloProto there), as a message;
# HloModuleProto has its name there: printable text, which a message never is (its first byte
# is a field key, a control character for the small field numbers these messages use).
_MAX_WRAPPERS = 3


def is_proto_path(path: str | Path) -> bool:
    """True for ``x.pb``, ``x.hlo.pb``, ``x.pb.gz`` ...: a binary proto by its name."""
    name = Path(path).name.lower()
    for suffix in COMPRESSED:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name.endswith(".pb")


def read_proto_text(path: str | Path) -> str:
    """The HLO text of the module in the binary proto file ``path`` (decompressed first).

    Raises :class:`InputError` for a file that cannot be read or holds no HLO module, and
    :class:`DependencyError` when no installed package can convert the proto.
    """
    p = Path(path)
    # streamed and bounded like every input (--max-input); .gz/.xz/.bz2 decompressed by suffix
    return proto_to_text(read_bytes(p, what="binary HLO proto"), str(p))


def proto_to_text(data: bytes, filename: str = "<proto>") -> str:
    """HLO text of a serialized ``HloModuleProto``, ``HloProto`` or ``HloSnapshot``."""
    module = module_proto(data, filename)
    convert = _converter()
    try:
        return convert(module)
    except Exception as err:  # noqa: BLE001  jaxlib raises RuntimeError/ValueError subclasses of its own
        raise InputError(f"{filename}: XLA could not read this HloModuleProto: {str(err).splitlines()[0]}") from None


def module_proto(data: bytes, filename: str = "<proto>") -> bytes:
    """The serialized ``HloModuleProto`` in ``data``, unwrapping ``HloProto``/``HloSnapshot``."""
    for _ in range(_MAX_WRAPPERS):
        try:
            fields = _fields(data)
        except ValueError as err:
            raise InputError(f"{filename}: not a binary HLO proto ({err})") from None
        first = fields.get(1)
        if first is None or _is_name(first):
            return data
        data = first
    raise InputError(f"{filename}: not a binary HLO proto (no HloModuleProto inside)")


def _is_name(value: bytes) -> bool:
    try:
        return value.decode("utf-8").isprintable()
    except UnicodeDecodeError:
        return False


def _fields(data: bytes) -> dict[int, bytes]:
    """The top-level length-delimited fields of a protobuf message (first of each number);
    raises ValueError (:class:`~hloviz.parser.wire.WireError`) when ``data`` is not protobuf
    wire format."""
    if not data:
        raise ValueError("the file is empty")
    out: dict[int, bytes] = {}
    for number, values in read_message(data).items():
        first = next((v for v in values if isinstance(v, bytes)), None)
        if first is not None:
            out[number] = first
    return out


def _converter():
    """XLA's HloModuleProto → text, from jaxlib; a :class:`DependencyError` when it is missing."""
    try:
        # XLA's HLO classes as jaxlib ships them: a compiled module whose name moves between
        # releases and which jaxlib ships no stub for, hence the ignores.
        from jaxlib import _hlo  # pyright: ignore[reportAttributeAccessIssue, reportUnknownVariableType]
    except ImportError:
        try:
            # older jaxlib: the same class lives here (private to jax, so no stub exports it)
            from jax._src.lib import _jax as _hlo  # pyright: ignore[reportPrivateUsage, reportPrivateImportUsage]
        except ImportError:
            raise DependencyError("reading a binary HLO proto needs XLA's proto support, which hloviz "
                                  "takes from jaxlib; it is not installed", hint=INSTALL_HINT) from None
    module_class = getattr(cast(ModuleType, _hlo), "HloModule", None)
    if module_class is None or not hasattr(module_class, "from_serialized_hlo_module_proto"):
        raise DependencyError("this jaxlib cannot read HLO protos (no HloModule.from_serialized_hlo_module_proto)",
                              hint=INSTALL_HINT)

    def convert(module: bytes) -> str:
        return module_class.from_serialized_hlo_module_proto(module).to_string()

    return convert
