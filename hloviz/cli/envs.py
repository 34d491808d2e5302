"""``hloviz envs list|remove|prune``: the environments ``--tf`` / ``--jax`` captures run in.

Each holds one TensorFlow (or JAX) release, hloviz and its dependencies — a few hundred MB —
in ``$XDG_CACHE_HOME/hloviz/envs`` (``~/.cache/hloviz/envs``; ``HLOVIZ_ENVS`` overrides it).
See :mod:`hloviz.capture.envs`.
"""

from __future__ import annotations

import datetime as _dt
import shutil
import sys
from typing import Annotated

import typer

from ..errors import InputError
from . import app
from .targets import note, print_json

envs_app = typer.Typer(name="envs", help="List and remove the environments that --tf/--jax captures run in.",
                       no_args_is_help=True, add_completion=False, rich_markup_mode=None)
app.add_typer(envs_app, name="envs")


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit != "GB" else f"{value:.1f} GB"
        value /= 1000
    return str(n)


def _when(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@envs_app.command("list")
def list_envs(
    as_json: Annotated[bool, typer.Option("--json", help="Print the environments as JSON.")] = False,
) -> None:
    """The environments in the cache: release, Python, hloviz source, size, last use."""
    from ..capture.envs import default_manager

    manager = default_manager()
    envs = manager.list()
    rows = []
    for env in envs:
        m = env.manifest
        installed = ", ".join(f"{k} {v}" for k, v in env.versions.items())
        rows.append({"name": env.name, "framework": m.get("framework"), "requested": m.get("requested"),
                     "installed": env.versions, "python": m.get("python"), "hloviz": m.get("hloviz"),
                     "hloviz_source": m.get("hloviz_source"), "hloviz_path": m.get("hloviz_path"),
                     "size_bytes": env.size(), "last_used": _when(env.last_used()), "path": str(env.path),
                     "current": m.get("hloviz_identity") == manager.source.identity, "_installed": installed})
    if as_json:
        out = {"root": str(manager.root), "environments": [{k: v for k, v in r.items() if not k.startswith("_")}
                                                          for r in rows]}
        print_json(out)
        return
    if not rows:
        print(f"no environments in {manager.root} (hloviz builds one on the first --tf/--jax capture)")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("name", "installed", "python", "hloviz", "size", "last used", title=f"environments in {manager.root}")
    for r in rows:
        source = f"{r['hloviz']} ({r['hloviz_source']}{'' if r['current'] else ', not this hloviz'})"
        table.add_row(r["name"], r["_installed"], r["python"], source, _size(r["size_bytes"]), r["last_used"])
    Console(highlight=False, width=None if sys.stdout.isatty() else 160).print(table)
    total = sum(r["size_bytes"] for r in rows)
    print(f"{len(rows)} environment(s), {_size(total)}")


@envs_app.command("remove")
def remove_envs(
    names: Annotated[list[str] | None, typer.Argument(
        help="Environment names (or the start of one) as hloviz envs list shows them.", show_default=False)] = None,
    tf: Annotated[str | None, typer.Option("--tf", help="Every environment of this TensorFlow release.",
                                              show_default=False)] = None,
    jax: Annotated[str | None, typer.Option("--jax", help="Every environment of this JAX release.",
                                               show_default=False)] = None,
    remove_all: Annotated[bool, typer.Option("--all", help="Every environment.")] = False,
) -> None:
    """Delete environments (a capture that is using one keeps it; it is skipped and named)."""
    from ..capture.envs import default_manager

    if not (names or tf or jax or remove_all):
        raise InputError("name the environments to remove, or use --tf VERSION, --jax VERSION or --all",
                         hint="hloviz envs list shows them")
    manager = default_manager()
    framework = "tensorflow" if tf else ("jax" if jax else None)
    chosen = manager.select(names or (), framework, tf or jax)
    if not chosen:
        raise InputError("no environment matches", hint="hloviz envs list shows them")
    busy = 0
    for env in chosen:
        if manager.remove(env):
            print(f"removed {env.name}")
        else:
            busy += 1
            note(f"{env.name} is in use by a running capture; left in place")
    if busy:
        raise typer.Exit(2)


@envs_app.command("prune")
def prune_envs(
    days: Annotated[float, typer.Option("--older-than", help="Remove environments unused for this many days.")] = 30,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would be removed.")] = False,
) -> None:
    """Remove environments unused for --older-than days, those whose hloviz checkout is gone or
    that another installed hloviz made, and what interrupted installs left behind."""
    from ..capture.envs import default_manager

    manager = default_manager()
    if days < 0:
        raise InputError(f"--older-than must be 0 or more days, not {days}")
    stale = manager.stale(days)
    for env, why in stale:
        if dry_run:
            print(f"would remove {env.name}: {why}")
        elif manager.remove(env):
            print(f"removed {env.name}: {why}")
        else:
            note(f"{env.name} is in use by a running capture; left in place")
    for path in manager.leftovers():
        if dry_run:
            print(f"would remove {path.name}: left by an interrupted install")
        else:
            shutil.rmtree(path, ignore_errors=True)
            print(f"removed {path.name}: left by an interrupted install")
    if not stale and not manager.leftovers():
        print(f"nothing to prune in {manager.root}")
