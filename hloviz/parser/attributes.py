"""Splitting ``, key=value, key={...}`` attribute lists into raw text values.

Three ways, fastest first. An attribute list as XLA prints it — values that are a word, a string,
or braces holding strings and brackets nested at most three deep — is checked by one
regular expression (:data:`_ATTRIBUTE_LIST`) and split by another (:data:`_ATTRIBUTE_PAIRS`),
both in C: no Python step per attribute. Otherwise the list is split at every ``, key=`` and
the result accepted when every value has balanced braces and quotes; only the rare line where a
``, key=`` appears inside braces or a string with escapes takes the careful bracket-aware path.
All three give the same dict for a list the first accepts.
"""

from __future__ import annotations

import re
import sys

from ..ir import quoted_string_pattern
from .text.scan import ScanError, split_top_level

_ATTR_SPLIT = re.compile(r",\s*([A-Za-z_][\w.\-]*)\s*=")
_KEY = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*=\s*")

# Possessive repeats (Python >= 3.11): nothing here is ever worth giving back, and the ordinary
# repeat would keep backtracking state per character.
_P = "+" if sys.version_info >= (3, 11) else ""
_STRING = quoted_string_pattern()  # on one line, with C escapes


def _bracketed(depth: int) -> str:
    """A ``{...}``, ``[...]`` or ``(...)`` group on one line whose brackets nest at most ``depth``
    deep and balance, with strings inside: what the careful split reads as one
    value too, so both ways give the same."""
    inner = rf'[^{{}}()\[\]"\n]+{_P}|{_STRING}'
    if depth > 1:
        inner += "|" + _bracketed(depth - 1)
    return "|".join(rf"\{open_}(?:{inner})*{_P}\{close}" for open_, close in ("{}", "[]", "()"))


#: A value: a string, a braced group, or a word (which has no brackets, quotes or commas).
_VALUE = rf'{_STRING}|\{{(?:[^{{}}()\[\]"\n]+{_P}|{_STRING}|{_bracketed(2)})*{_P}\}}|[^\s,{{}}()\[\]"]+{_P}'


def _pair(group: str) -> str:
    """``, key=value`` with spaces around the parts; ``group`` opens the key's and the value's
    groups: ``"("`` to capture them, ``"(?:"`` not to."""
    return rf",\s*{_P}{group}[A-Za-z_][\w.\-]*{_P})\s*{_P}=\s*{_P}{group}{_VALUE})\s*{_P}"


#: A whole attribute list of the common form (see the module docstring), from its first ``,``.
_ATTRIBUTE_LIST = re.compile(rf"\s*{_P}(?:{_pair('(?:')})+{_P}\Z")
#: Its ``(key, value)`` pairs, values without the spaces around them.
_ATTRIBUTE_PAIRS = re.compile(_pair("("))


#: The most common attribute list of all, ``, metadata={...}`` alone as XLA prints it (no spaces
#: around ``=``, no brackets inside the braces but in strings): checked and split by one match.
#: What it accepts, :data:`_ATTRIBUTE_LIST` accepts and :data:`_ATTRIBUTE_PAIRS` splits the same.
_METADATA_ONLY = re.compile(rf', metadata=(\{{(?:[^{{}}()\[\]"\n]+{_P}|{_STRING})*{_P}\}})\Z')


def split_common_attributes(text: str, heads: dict[str, dict[str, str]] | None = None) -> dict[str, str] | None:
    """``text`` (``, key=value, ...``) split when it is a list of the common form (see the module
    docstring), else None. One regular expression checks it and another splits it; one does both
    for a list of metadata alone.

    A list that ends with ``, metadata={...}`` as XLA prints it (:data:`_METADATA_ONLY`) is split
    as its head, the attributes before the metadata, and that metadata. With ``heads``, a cache
    the caller keeps for one parse (head text → its split, never changed), each distinct head is
    split once: a large module's attribute lists are mostly distinct (the metadata names the op
    and its place), but its heads are few (on the 312k-instruction benchmark module, 60k
    distinct lists, 3.5k distinct heads)."""
    at = text.rfind(", metadata={")
    if at >= 0:
        tail = _METADATA_ONLY.match(text, at)
        if tail is not None:
            if at == 0:
                return {"metadata": tail.group(1)}
            if heads is not None:
                head = text[:at]
                split = heads.get(head)
                if split is None:
                    split = _split_common(head)
                    if split is None:  # (a head that is not of the common form never makes the whole one so)
                        return _split_common(text)
                    heads[head] = split
                attributes = split.copy()
                attributes["metadata"] = tail.group(1)  # (a key written twice keeps its first place, last value)
                return attributes
    return _split_common(text)


def _split_common(text: str) -> dict[str, str] | None:
    if _ATTRIBUTE_LIST.match(text) is None:
        return None
    return dict(_ATTRIBUTE_PAIRS.findall(text))


def split_attributes(text: str, start: int) -> dict[str, str]:
    """Parse ``text[start:]``, which must be empty or start with ``,``, into ``{key: raw value}``.

    Raises :class:`ScanError` (offset into ``text``) on malformed input.
    """
    if _ATTRIBUTE_LIST.match(text, start) is not None:
        return dict(_ATTRIBUTE_PAIRS.findall(text, start))
    rest = text[start:]
    parts = _ATTR_SPLIT.split(rest)
    if parts[0].strip():
        raise ScanError("expected ',' before the next attribute or the end of the instruction",
                        start + len(parts[0]) - len(parts[0].lstrip()))
    attrs: dict[str, str] = {}
    for k in range(1, len(parts), 2):
        value = parts[k + 1]
        if value.count("{") != value.count("}") or ('"' in value and (value.count('"') % 2 or "\\" in value)):
            return _split_carefully(text, start)
        attrs[parts[k]] = value.strip()
    for value in attrs.values():
        if not value:
            return _split_carefully(text, start)
    return attrs


def _split_carefully(text: str, start: int) -> dict[str, str]:
    attrs: dict[str, str] = {}
    spans = split_top_level(text, start)
    # The text before the first top-level comma must be blank.
    first_start, first_end = spans[0]
    if text[first_start:first_end].strip():
        raise ScanError("expected ',' before the next attribute", first_start)
    for a, b in spans[1:]:
        m = _KEY.match(text, a, b)
        if not m:
            offset = a + len(text[a:b]) - len(text[a:b].lstrip())
            raise ScanError("expected an attribute 'name=value'", offset)
        value = text[m.end() : b].strip()
        if not value:
            raise ScanError(f"attribute '{m.group(1)}' has no value", m.end())
        attrs[m.group(1)] = value
    return attrs


def split_rest(rest: str, heads: dict[str, dict[str, str]] | None = None) -> dict[str, str] | None:
    """The attributes after a fast-path instruction's operands (``rest`` starts with ``,``), or
    None when the general path must read the line (a quote or brace left open, a trailing comma:
    the statement may go on below; or a list the careful split refuses, which it reports).
    ``heads``: see :func:`split_common_attributes`."""
    attrs = split_common_attributes(rest, heads)
    if attrs is not None:
        return attrs
    if rest.count("{") != rest.count("}") or ('"' in rest and (rest.count('"') % 2 or '\\"' in rest)) \
            or rest.rstrip()[-1] == ",":
        return None
    try:
        return split_attributes(rest, 0)
    except ScanError:
        return None


def names_in(value: str) -> list[str]:
    """Names listed in an attribute such as ``%comp`` or ``{%a, %b}``, without ``%``."""
    v = value.strip()
    if v.startswith("{"):
        v = v[1:-1] if v.endswith("}") else v[1:]
    return [n.strip().lstrip("%") for n in v.split(",") if n.strip()]
