"""Protobuf wire format, read field by field: what hloviz needs of XLA's binary protos.

XLA hands out HLO modules and its buffer assignment as serialized protos (``.hlo.pb`` dumps,
TensorFlow's ``HloProto`` from ``experimental_get_compiler_ir(stage=
"optimized_hlo_proto_serialized")``, JAX's ``memory_analysis().serialized_buffer_assignment_proto``).
Their generated classes ship with the frameworks, not with hloviz, and a saved capture must be
readable without either; the messages needed are small, so they are read here from the wire
format itself, by field number as ``xla/service/hlo.proto`` declares them
(:mod:`hloviz.parser.proto` finds the module in a proto; :mod:`hloviz.analysis.memory.records`
reads the buffer assignment).
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["Message", "WireError", "read_message"]

#: A decoded message: field number → its values in order (ints for varints and fixed-size
#: fields, bytes for length-delimited ones: strings, sub-messages, packed repeated fields).
Message = dict[int, list[int | bytes]]


class WireError(ValueError):
    """The bytes are not protobuf wire format (truncated, or not a proto at all)."""


def read_message(data: bytes) -> Message:
    """Every field of one message, by number."""
    out: Message = {}
    pos, n = 0, len(data)
    while pos < n:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = int.from_bytes(data[pos:pos + 8], "little"), pos + 8
        elif wire == 5:
            value, pos = int.from_bytes(data[pos:pos + 4], "little"), pos + 4
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > n:
                raise WireError("a field runs past the end")
            value, pos = data[pos:pos + size], pos + size
        else:
            raise WireError(f"wire type {wire}")
        if pos > n:
            raise WireError("a field runs past the end")
        out.setdefault(number, []).append(value)
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise WireError("a truncated number")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def signed(value: int) -> int:
    """An int64 read as a varint (two's complement over 64 bits)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def ints(message: Message, number: int) -> Iterator[int]:
    """A repeated integer field, packed or not."""
    for value in message.get(number, ()):
        if isinstance(value, int):
            yield signed(value)
        else:
            pos = 0
            while pos < len(value):
                v, pos = _varint(value, pos)
                yield signed(v)


def one_int(message: Message, number: int, default: int = 0) -> int:
    values = message.get(number)
    if not values:
        return default
    v = values[-1]
    return signed(v) if isinstance(v, int) else default


def one_text(message: Message, number: int) -> str:
    values = message.get(number)
    if not values or not isinstance(values[-1], bytes):
        return ""
    return values[-1].decode("utf-8", "replace")


def messages(message: Message, number: int) -> Iterator[Message]:
    for value in message.get(number, ()):
        if isinstance(value, bytes):
            yield read_message(value)
