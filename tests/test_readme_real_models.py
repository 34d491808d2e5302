"""The docs' "Real models" section (docs/stats.md) says what the code says: its table is the output of the
command it shows, and its Python example runs."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from hloviz.cli import app

from .docs_pages import page
from .docs_pages import section as docs_section

ROOT = Path(__file__).resolve().parent.parent


def section() -> str:
    return docs_section(page("stats"), "## Real models")


def _count(n: int) -> str:
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(n)


def test_the_table_is_what_stats_by_scope_prints(monkeypatch):
    commands = [shlex.split(line) for block in re.findall(r"```sh\n(.*?)```", section(), re.DOTALL)
                for line in block.splitlines() if line.startswith("hloviz stats")]
    argv = commands[0]
    assert argv[3:] == ["--by", "scope", "--depth", "2"]
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, [*argv[1:], "--json"])
    assert result.exit_code == 0, result.output
    rows = {("(module)" if r["depth"] == 0 else r["label"]): r for r in json.loads(result.stdout)["scopes"]}
    first_table = section().split("\n\n| ", 1)[1].split("\n\n", 1)[0]  # the table under the command
    table = [line for line in ("| " + first_table).splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(table) >= 10
    for line in table:
        cells = [c.strip() for c in line.strip("|").split("|")]
        label = cells[0].replace("&nbsp;", "").strip("`")
        r = rows[label]
        phases = " / ".join(str(len(r["phases"].get(p, {}).get("kernels", []))) for p in
                            ("forward", "backward", "optimizer"))
        assert cells[1:] == [str(r["kernel_count"]), phases, _count(r["flops"]), _bytes(r["bytes"])], label


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def test_the_python_example_runs():
    [code] = re.findall(r"```python\n(.*?)```", section(), re.DOTALL)
    from hloviz.capture import load_target

    post_module = load_target(str(ROOT / "samples" / "captures" / "mobilenet_v2")).post_module()
    scope: dict = {"post_module": post_module}
    exec(compile(code, "docs/stats.md", "exec"), scope)
    tree = scope["tree"]
    assert scope["block"].label == "block_5_expand"
    assert scope["block"].display_path in tree.closest("block_5_expnad")  # clean names, as find takes back
    assert tree.find(tree.closest("block_5_expnad")[0]) == [scope["block"]]
    assert len(tree.scopes_of_kernel("add_clamp_fusion.4")) >= 1
