"""Record XLA's own cost analysis of every saved sample capture, so that a fast test (no JAX)
checks hloviz's FLOPs of real TensorFlow and JAX programs, CPU and GPU, against XLA's figures.

For each ``samples/captures/**/{pre,post}.hlo[.gz]`` this parses the text with XLA's own HLO
parser (jaxlib) and writes XLA's cost analysis of the module (``flops`` + ``transcendentals``)
to ``tests/data/costs/sample_costs.json``, with the SHA-256 of the text it costed.

XLA's CPU cost analysis counts a library call as no work, and a GPU module hands its
convolutions to cuDNN (``custom-call`` ``__cudnn$conv…``). For each such call the record also
holds XLA's cost of the ``convolution`` it replaced: the instruction of the module before
optimization with the same ``op_name``, copied out of that text into a module of its own
(its operands made parameters) and costed by XLA alone.

Run: ``python scripts/record_sample_costs.py`` (needs JAX).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "captures"
OUT = ROOT / "tests" / "data" / "costs" / "sample_costs.json"

_LINE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_OP_NAME = re.compile(r'op_name="([^"]*)"')


def _text(path: Path) -> str:
    return gzip.open(path, "rt", encoding="utf-8").read() if path.suffix == ".gz" else path.read_text("utf-8")


def _module(folder: Path, stage: str) -> Path | None:
    for name in (f"{stage}.hlo", f"{stage}.hlo.gz"):
        if (folder / name).exists():
            return folder / name
    return None


def _lines(text: str) -> dict[str, str]:
    """Instruction name → the rest of its line (shape, opcode, operands, attributes)."""
    out = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m and "(" in m.group(2):
            out[m.group(1)] = m.group(2)
    return out


def _alone(rest: str, shapes: dict[str, str]) -> str | None:
    """A module holding one ``convolution`` (its line's rest ``rest``), its operands parameters."""
    m = re.match(r"(\S+(?:\{[^}]*\})?)\s+convolution\(([^)]*)\),\s*(.*)$", rest)
    if not m:
        return None
    shape, operands, attrs = m.groups()
    names = [o.strip().split()[-1].lstrip("%") for o in operands.split(",")]
    if any(n not in shapes for n in names):
        return None
    attrs = re.sub(r",?\s*metadata=\{[^}]*\}", "", attrs)
    params = [f"  p{i} = {shapes[n]} parameter({i})" for i, n in enumerate(names)]
    call = ", ".join(f"p{i}" for i in range(len(names)))
    return "HloModule alone\n\nENTRY main {\n" + "\n".join(params) + \
        f"\n  ROOT c = {shape} convolution({call}), {attrs}\n}}\n"


def main() -> int:
    import jax
    from jax._src.lib import _jax
    from jaxlib import _hlo

    client = jax.devices("cpu")[0].client

    def cost(text: str) -> int:
        c = _jax.hlo_module_cost_analysis(client, _hlo.hlo_module_from_text(text))
        return int((c.get("flops") or 0) + (c.get("transcendentals") or 0))

    records = []
    for folder in sorted({p.parent for p in SAMPLES.rglob("*.hlo*")}):
        texts = {s: _text(p) for s in ("pre", "post") if (p := _module(folder, s)) is not None}
        for stage, text in texts.items():
            record = {"capture": folder.relative_to(ROOT).as_posix(), "stage": stage,
                      "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "jax": jax.__version__,
                      "xla_flops": cost(text), "library_convolutions": {}}
            if stage == "post" and "pre" in texts and "__cudnn$conv" in text:
                pre = _lines(texts["pre"])
                shapes = {n: r.split(" ", 1)[0] for n, r in pre.items()}
                by_op = {}
                for rest in pre.values():
                    op = _OP_NAME.search(rest)
                    if op and " convolution(" in rest:
                        by_op.setdefault(op.group(1), []).append(rest)
                for name, rest in _lines(text).items():
                    op = _OP_NAME.search(rest)
                    if "__cudnn$conv" not in rest or not op or len(by_op.get(op.group(1), [])) != 1:
                        continue
                    alone = _alone(by_op[op.group(1)][0], shapes)
                    if alone is not None:
                        record["library_convolutions"][name] = cost(alone)
            records.append(record)
            print(f"{record['capture']:48} {stage:4} {record['xla_flops']:>18,} {record['library_convolutions'] or ''}")
    OUT.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(records)} records to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
