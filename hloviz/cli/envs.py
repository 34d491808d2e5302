"""``hloviz envs list|remove|prune``: the environments ``--tf`` / ``--jax`` captures run in.

Each holds one TensorFlow (or JAX) release, hloviz and its dependencies — a few hundred MB —
in ``$XDG_CACHE_HOME/hloviz/envs`` (``~/.cache/hloviz/envs``; ``HLOVIZ_ENVS`` overrides it).
See :mod:`hloviz.capture.releases.envs`.
"""

from __future__ import annotations

import datetime as _dt
import sys
from typing import Annotated

import typer

from ..errors import HlovizError, InputError, visible
from .root import app
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
    from ..capture.releases.envs import default_manager

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
                     "current": m.get("hloviz_identity") == manager.source.identity, "problem": env.problem,
                     "_installed": installed})
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
        if r["problem"]:  # below the table: nothing of a damaged manifest is shown, only why it is not used
            continue
        source = f"{r['hloviz']} ({r['hloviz_source']}{'' if r['current'] else ', not this hloviz'})"
        # the manifest is a file in a cache others may write: its text is shown escaped
        table.add_row(*(visible(str(c)) for c in (r["name"], r["_installed"], r["python"], source)),
                      _size(r["size_bytes"]), r["last_used"])
    if any(not r["problem"] for r in rows):
        Console(highlight=False, width=None if sys.stdout.isatty() else 160).print(table)
    for r in rows:
        if r["problem"]:
            fix = "hloviz envs remove NAME deletes the link" if r["problem"].startswith("a symbolic link") else \
                "hloviz envs prune removes it"
            print(f"{visible(r['name'])}: not used: {visible(r['problem'])} ({fix})")
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
    from ..capture.releases.envs import default_manager

    if any(not n.strip() for n in names or ()) or (tf is not None and not tf.strip()) or \
            (jax is not None and not jax.strip()):
        raise InputError("an empty name or version matches nothing (an unset shell variable?); nothing was removed",
                         hint="hloviz envs list shows the names; --all removes every environment")
    if not (names or tf or jax or remove_all):
        raise InputError("name the environments to remove, or use --tf VERSION, --jax VERSION or --all",
                         hint="hloviz envs list shows them")
    manager = default_manager()
    framework = "tensorflow" if tf else ("jax" if jax else None)
    chosen = manager.select(names or (), framework, tf or jax)
    if not chosen:
        raise InputError("no environment matches", hint="hloviz envs list shows them")
    failed = 0
    for env in chosen:
        failed += not _remove(manager, env, None)
    if failed:
        raise typer.Exit(2)


def _remove(manager, env, why: str | None) -> bool:
    """Remove ``env`` and say so (what was removed, and why); False when it was left in place."""
    link = env.is_link
    try:
        gone = manager.remove(env)
    except HlovizError as err:
        note(str(err))
        return False
    if not gone:
        note(f"{env.name} is in use by a running capture; left in place")
        return False
    what = f"the link {env.name} (what it points to is left alone)" if link else env.name
    print(f"removed {what}{': ' + why if why else ''}")
    return True


@envs_app.command("prune")
def prune_envs(
    days: Annotated[float, typer.Option("--older-than", help="Remove environments unused for this many days.")] = 30,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would be removed.")] = False,
) -> None:
    """Remove environments unused for --older-than days, those whose hloviz checkout is gone or
    that another installed hloviz made, and what interrupted installs left behind."""
    from ..capture.releases.envs import default_manager

    manager = default_manager()
    if days < 0:
        raise InputError(f"--older-than must be 0 or more days, not {days}")
    stale = manager.stale(days)
    leftovers = manager.leftovers()
    failed = 0
    for env, why in stale:
        if dry_run:
            print(f"would remove {env.name}: {why}")
        else:
            failed += not _remove(manager, env, why)
    for path in leftovers:
        what = f"{'the link ' if path.is_symlink() else ''}{path.name}: left by an interrupted install or removal"
        if dry_run:
            print(f"would remove {what}")
            continue
        try:
            manager.remove_leftover(path)
        except HlovizError as err:
            note(str(err))
            failed += 1
            continue
        print(f"removed {what}")
    if not stale and not leftovers:
        print(f"nothing to prune in {manager.root}")
    if failed:
        raise typer.Exit(2)
