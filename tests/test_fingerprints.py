"""Refactors of the picture and scope code are guarded here, not by scripts run by hand: the
DOT text ``hloviz render CAPTURE --stage both -o x.dot`` writes for every saved capture, and the
scope tree and layer attribution of every capture, must hash as recorded in ``tests/golden/``.

The DOT text is written before any Graphviz layout, so it does not depend on fonts or on the
Graphviz version (the SVG does). These are fingerprints, not meaning: what the pictures and
layers *mean* is asserted by the tests of each module; these catch any change, meant or not.
A change meant to alter them regenerates the files and says why in its commit:

    python benchmarks/picture_fingerprints.py tests/golden/picture_fingerprints.json
    python benchmarks/scope_fingerprints.py . tests/golden/scope_fingerprints.json
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
PICTURES = json.loads((GOLDEN / "picture_fingerprints.json").read_text(encoding="utf-8"))
SCOPES = json.loads((GOLDEN / "scope_fingerprints.json").read_text(encoding="utf-8"))


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_capture_has_its_fingerprints_recorded():
    captures = {f.name for f in _bench("picture_fingerprints").captures()}
    assert captures == set(PICTURES), "a capture was added or removed: regenerate tests/golden (see the docstring)"
    assert {k.split("/")[0] for k in SCOPES} == captures


#: Captures whose picture takes several seconds to build (marked slow; `make test` runs them).
HEAVY = {"convnext_tiny", "densenet121", "efficientnet_b0", "inception_v3", "jax_gpt_step", "jax_gpt_step12", "jax_mlp",
         "keras_transformer", "resnet50",
         "transformer_train-tf2.17", "transformer_train-tf2.21"}


def _captures(names) -> list:
    return [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n for n in sorted(names)]


@pytest.mark.parametrize("name", _captures(PICTURES))
def test_the_dot_text_of_each_capture_is_as_recorded(name, capsys):
    bench = _bench("picture_fingerprints")
    got = bench.fingerprint([str(bench.CAPTURES / name), "--stage", "both"])
    capsys.readouterr()
    assert got == PICTURES[name], (f"the DOT text of {name} changed; if that is meant, regenerate "
                                   "tests/golden/picture_fingerprints.json (see this file's docstring)")


@pytest.mark.parametrize("name", _captures({k.split("/")[0] for k in SCOPES}))
def test_the_scope_tree_and_layers_of_each_capture_are_as_recorded(name):
    import hloviz
    from hloviz.analysis.provenance import parameter_names
    from hloviz.analysis.scopes import build_scope_tree

    bench = _bench("scope_fingerprints")
    folder = ROOT / "samples" / "captures" / name
    info = json.loads((folder / "capture.json").read_text())
    got: dict[str, str] = {}
    for stage in ("pre", "post"):
        text = bench._read(folder, stage)
        if text is None:
            continue
        module = hloviz.parse(text)
        got.update(bench._fingerprints(f"{name}/{stage}/plain", build_scope_tree(module, stage=stage)))
        tree = build_scope_tree(module, stage=stage, parameter_names=parameter_names(module, info),
                                layers=info.get("layer_scopes"))
        got.update(bench._fingerprints(f"{name}/{stage}/named", tree))
    recorded = {k: v for k, v in SCOPES.items() if k.split("/")[0] == name}
    changed = sorted(k for k in recorded if got.get(k) != recorded[k])
    assert got == recorded, f"changed: {changed}; if that is meant, regenerate tests/golden/scope_fingerprints.json"
