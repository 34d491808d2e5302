"""A package's public names imported on first use (PEP 562), not when the package is.

``import hloviz`` and ``import hloviz.render`` name dozens of functions whose modules take tens
of milliseconds to import together; a command that needs one of them (``hloviz diff`` checking
its ``--timeout``, the capture child reading nothing but its request) paid for all of them
(issue 32). A package lists where each public name lives and hands :func:`lazy_names` its
namespace; ``__getattr__`` then imports a name's module when the name is first read and keeps
the name, so the next read is a plain attribute. A submodule not imported yet is imported when
it is first read as an attribute (``hloviz.capture.load_target`` after ``import hloviz``), as it
was when the package imported everything.

A name that is also the name of one of the package's submodules (``hloviz.api.diff``, the
function, and ``hloviz/api/diff.py``) would be rebound to the submodule the moment anything
imported it (Python sets the package's attribute then); :func:`lazy_names` makes the package's
module refuse that rebinding for the names it lists, so ``api.diff`` stays the function.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(namespace: dict[str, Any], homes: Mapping[str, Iterable[str]]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package whose globals are ``namespace``;
    ``homes``: module (relative, ``".ir"``) → the public names it defines."""
    package = namespace["__name__"]
    home_of = {name: module for module, names in homes.items() for name in names}
    # names their home's package shares (``api.diff``, the function, in ``api/diff.py``)
    shadowed = frozenset(name for name, module in home_of.items() if module.split(".")[1] == name)
    if shadowed:
        sys.modules[package].__class__ = _keeping(shadowed)

    def __getattr__(name: str) -> Any:
        module = home_of.get(name)
        if module is None and not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f"{package}.{name}")  # a submodule: ``hloviz.capture.load_target``
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        imported = importlib.import_module(module, package)
        value = getattr(imported, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home_of})

    return __getattr__, __dir__


def _keeping(names: frozenset[str]) -> type[types.ModuleType]:
    """A module class whose instances keep ``names`` off their submodules of the same names."""

    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if name in names and isinstance(value, types.ModuleType):
                return  # the import of the submodule ``name``: the attribute stays the function
            super().__setattr__(name, value)

    return _Package
