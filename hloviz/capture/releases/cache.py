"""The cache of environments as it is on disk: what is in it, holding one, removing one.

In: the cache folder (:func:`cache_root`). Out: its environments (:class:`Env`, with why hloviz
will not use a damaged one), the locks that keep a capture's environment from being removed, and
``hloviz envs list|remove|prune``'s answers (:class:`EnvCache`). Its own module because managing
the cache needs nothing of building an environment (installers, the package index), which
:class:`~.envs.EnvManager` adds on top. The rules on what is hloviz's are :mod:`.env_files`'s.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hloviz.capture.releases.env_files import (
    ENV_NAME,
    MANIFEST_LIMIT,
    TEMP_NAME,
    delete,
    is_package,
    link_target,
    manifest_problem,
)
from hloviz.capture.releases.frameworks import FRAMEWORKS
from hloviz.capture.releases.installers import env_python
from hloviz.capture.releases.source import HlovizSource
from hloviz.errors import DependencyError, InputError, visible

__all__ = ["LAST_USED", "MANIFEST", "Env", "EnvCache", "cache_root", "file_lock"]

MANIFEST = "hloviz-env.json"
LAST_USED = "last-used"


def cache_root() -> Path:
    """``$HLOVIZ_ENVS``, else ``$XDG_CACHE_HOME/hloviz/envs``, else ``~/.cache/hloviz/envs``."""
    if os.environ.get("HLOVIZ_ENVS"):
        return Path(os.environ["HLOVIZ_ENVS"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hloviz" / "envs"


@dataclass
class Env:
    """A complete environment in the cache."""

    path: Path
    manifest: dict = field(default_factory=dict)
    #: Why hloviz will not use it, when it will not: its ``hloviz-env.json`` is damaged, or the
    #: entry is a symbolic link (see the module docstring). None for a sound environment.
    problem: str | None = None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def is_link(self) -> bool:
        return self.path.is_symlink()

    @property
    def python(self) -> Path:
        return env_python(self.path)

    @property
    def versions(self) -> dict:
        """The exact framework versions installed (``{"tensorflow": "2.17.1"}``)."""
        return dict(self.manifest.get("installed") or {})

    def last_used(self) -> float:
        """When a capture last used it (its manifest's time before the first), 0 when unknown."""
        for name in (LAST_USED, MANIFEST):
            with contextlib.suppress(OSError):
                return os.lstat(self.path / name).st_mtime
        return 0.0

    def size(self) -> int:
        """Bytes of its files (a link's target is not counted: hloviz does not follow it)."""
        if self.is_link:
            return 0
        total = 0
        for dirpath, _dirs, files in os.walk(self.path):
            for f in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, f)).st_size
        return total


@contextlib.contextmanager
def file_lock(path: Path, *, shared: bool = False, wait: bool = True,
              on_wait: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold a ``flock`` on ``path``; yields False (holding nothing) when ``wait`` is False and
    another process holds it. ``on_wait`` is called once if we have to wait."""
    try:
        import fcntl
    except ImportError:  # no flock here: go ahead unserialised (see the module docstring)
        yield True
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                yield False
                return
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, mode)
        yield True
    finally:
        os.close(fd)  # closing releases the lock


class EnvCache:
    """The environments in one cache folder: :meth:`list`, :meth:`select`, :meth:`remove`,
    :meth:`stale`, :meth:`leftovers`, and :meth:`using` one for a capture."""

    def __init__(self, root: Path | str | None, source: HlovizSource) -> None:
        self.root = Path(root) if root is not None else cache_root()
        self.source = source

    def lock_path(self, name: str) -> Path:
        return self.root / ".locks" / f"{name}.lock"

    @staticmethod
    def complete(path: Path) -> bool:
        """``path`` holds a whole environment: a real folder (not a link) with a manifest and an
        interpreter. Whether the manifest is sound is :meth:`load`'s question."""
        return (not path.is_symlink() and path.is_dir() and (path / MANIFEST).is_file()
                and env_python(path).exists())

    @staticmethod
    def load(path: Path) -> Env:
        """The environment at ``path``, with :attr:`Env.problem` set when it is a link or its
        manifest is damaged (then ``manifest`` is empty: nothing in it is trusted)."""
        if path.is_symlink():
            return Env(path, {}, f"a symbolic link to {link_target(path)}; hloviz does not follow it")
        try:
            manifest = json.loads((path / MANIFEST).read_bytes()[:MANIFEST_LIMIT].decode("utf-8"))
        except OSError as err:
            return Env(path, {}, f"its {MANIFEST} cannot be read ({err.strerror or err})")
        except UnicodeDecodeError:
            return Env(path, {}, f"its {MANIFEST} is not UTF-8 text")
        except (ValueError, RecursionError):
            return Env(path, {}, f"its {MANIFEST} is not JSON")
        problem = manifest_problem(manifest, FRAMEWORKS)
        if problem is not None:
            return Env(path, {}, f"its {MANIFEST} is damaged: {problem}")
        return Env(path, manifest)

    # -- using ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def using(self, env: Env) -> Iterator[Env]:
        """Hold ``env`` for a capture: ``remove``/``prune`` leave it alone meanwhile."""
        with file_lock(self.lock_path(env.name), shared=True):
            if not self.complete(env.path):
                raise DependencyError(f"the environment {env.path} was removed while hloviz was about to use it",
                                      hint="run the command again; it will be rebuilt")
            yield env

    # -- managing -------------------------------------------------------------------------------

    def list(self) -> list[Env]:
        """The environments, newest use first: folders named as hloviz names them that hold a
        manifest and an interpreter, damaged ones and links under such names too (with their
        :attr:`Env.problem`). Nothing else in the folder is hloviz's."""
        if not self.root.is_dir():
            return []
        envs = [self.load(p) for p in self.root.iterdir()
                if ENV_NAME.fullmatch(p.name) and (p.is_symlink() or self.complete(p))]
        return sorted(envs, key=lambda e: -e.last_used())

    def select(self, names: Sequence[str] = (), framework: str | None = None, version: str | None = None) -> list[Env]:
        """Environments by name (or name prefix), or by framework and requested version."""
        out = []
        for env in self.list():
            if names and not any(env.name == n or env.name.startswith(n) for n in names):
                continue
            if framework and env.manifest.get("framework") != framework:
                continue
            if version and version not in (env.manifest.get("requested"),
                                           (env.manifest.get("installed") or {}).get(framework or "", None)):
                continue
            out.append(env)
        return out

    def remove(self, env: Env) -> bool:
        """Delete ``env`` unless a capture is using it; True when it is gone, False when in use.
        A link is deleted alone, never what it points to. :class:`InputError` when ``env`` is
        not one of this cache's or cannot be deleted whole (naming what is left)."""
        if env.path.parent != self.root or not ENV_NAME.fullmatch(env.name):
            raise InputError(f"{env.path} is not an environment of {self.root}; hloviz removes only its own")
        if env.is_link:
            delete(env.path)
            return True
        with file_lock(self.lock_path(env.name), wait=False) as got:
            if not got:
                return False
            doomed = self.root / f".tmp-{env.name}-removing-{os.getpid()}"
            try:
                os.rename(env.path, doomed)  # gone from the cache at once, even if deleting takes long
            except FileNotFoundError:
                return True
            except OSError as err:
                raise InputError(f"cannot remove {env.path}: {err.strerror or err}") from None
            delete(doomed)
        return True  # the lock file stays: a run waiting on it must not race one that made a new one

    def stale(self, older_than_days: float) -> list[tuple[Env, str]]:
        """Environments ``prune`` would remove, with the reason."""
        cutoff = time.time() - older_than_days * 86400
        out = []
        for env in self.list():
            m = env.manifest
            if env.is_link:
                continue  # not hloviz's to judge: envs remove NAME deletes the link
            if env.problem is not None:
                out.append((env, env.problem))
            elif m.get("hloviz_source") == "checkout" and not is_package(m.get("hloviz_path", "")):
                checkout = str(Path(m.get("hloviz_path", "")).parent)
                shown = checkout if len(checkout) <= 200 else f"{checkout[:200]}… ({len(checkout)} characters)"
                out.append((env, f"its hloviz checkout {visible(shown)} is gone"))
            elif m.get("hloviz_path") == str(self.source.package) and m.get("hloviz_identity") != self.source.identity:
                out.append((env, "made for this hloviz before its dependencies changed"))
            elif m.get("hloviz_identity") != self.source.identity and m.get("hloviz_source") == "installed":
                out.append((env, f"made for another installed hloviz ({m.get('hloviz')})"))
            elif env.last_used() < cutoff:
                days = (time.time() - env.last_used()) / 86400
                out.append((env, f"unused for {days:.0f} days"))
        return out

    def leftovers(self) -> list[Path]:
        """hloviz's temporary folders (builds and removals) whose process is gone (no lock
        held). Only names hloviz gives them count (a user's ``.tmp-thesis`` is not one), and
        the lock is looked at only for such a name."""
        out = []
        for p in self._temporaries():
            name = TEMP_NAME.fullmatch(p.name)["name"]  # type: ignore[index]  # _temporaries matched it
            if not self.lock_path(name).exists():
                out.append(p)  # no build ever locked it: nobody is building it
                continue
            with file_lock(self.lock_path(name), wait=False) as got:
                if got:
                    out.append(p)
        return out

    def remove_leftover(self, path: Path) -> None:
        """Delete one of :meth:`leftovers` (a link alone, not what it points to);
        :class:`InputError` naming what is left when it cannot."""
        if path.parent != self.root or not TEMP_NAME.fullmatch(path.name):
            raise InputError(f"{path} is not a temporary folder of hloviz's; hloviz removes only its own")
        delete(path)

    def _temporaries(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.iterdir() if TEMP_NAME.fullmatch(p.name))
