"""Every fusion a picture of the explorer draws as a box of its own opens from that picture.

Since a layer's picture draws the fusions :meth:`~hloviz.analysis.scopes.ScopeTree.layers_of`
gives the layer (issue 31, item 5), a fusion's picture used to open from the first view holding
it — the top picture, where it sits inside a closed layer with hundreds of other ops — and the
layer pictures that do draw it as a box had nothing to open (ResNet50: none of 48 fusion pictures
opened from a view drawing its fusion as a box). This test reads the page's data (no browser)
and checks, on each sample, that every fusion drawn as a box of its own in a view has a picture,
and that the view it goes back to draws it as a box of its own too.

The oracle is the optimized HLO text read by regex: which instructions are fusions, which
instructions each fused computation holds, and which do work (opcodes other than the
bookkeeping ones written here by hand). The page's data only says which instruction names each
drawn box holds.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

#: Opcodes that do no work of their own (a fusion of one op plus these is not worth a picture).
NO_WORK = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}

FAST = ["keras_cnn_train", "mobilenet_v3_small", "cnn_adam", "loops_vit", "keras_mha", "resblock_train_step"]
SLOW = ["resnet50", "keras_transformer", "mobilenet_v3_adam"]


def _post_text(folder: Path) -> str:
    plain = folder / "post.hlo"
    return plain.read_text() if plain.exists() else gzip.decompress((folder / "post.hlo.gz").read_bytes()).decode()


_NAME = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_OPCODE = re.compile(r"\s([a-z][a-z0-9\-]*)\(")


def hlo_fusions(text: str) -> tuple[dict[str, str], dict[str, list[tuple[str, str]]]]:
    """From the HLO text: fusion instruction → the computation it calls, and computation →
    its instructions as (name, opcode)."""
    calls: dict[str, str] = {}
    bodies: dict[str, list[tuple[str, str]]] = {}
    current: str | None = None
    for line in text.splitlines():
        head = re.match(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$", line)
        if head and not line.startswith(" "):
            current = head.group(1)
            bodies[current] = []
            continue
        if line.strip() == "}":
            current = None
            continue
        m = _NAME.match(line)
        if m is None or current is None:
            continue
        op = _OPCODE.search(" " + m.group(2).split(", metadata=")[0])
        opcode = op.group(1) if op else ""
        bodies[current].append((m.group(1), opcode))
        if opcode == "fusion":
            called = re.search(r"calls=%?([\w.\-]+)", line)
            if called:
                calls[m.group(1)] = called.group(1)
    return calls, bodies


def _page_data(name: str) -> dict:
    return _page(name)[0]


def _page(name: str):
    """The explorer's data of the capture's ``show`` page, and the payload it came in."""
    from hloviz.analysis import analyze
    from hloviz.capture import load_target
    from hloviz.render.page.explorer import Bounds, pair_payload
    from hloviz.render.pictures import pair_picture

    cap = load_target(str(CAPTURES / name))
    pre, post = cap.pre_module(), cap.post_module()
    assert pre is not None and post is not None
    analysis = analyze(pre, post, info=cap.info)
    picture = pair_picture(pre, post, analysis, info=cap.info, title=name)
    # time bounds out of the way: which fusions open must not hang on how busy the machine is
    payload = pair_payload(pre, post, analysis, picture, info=cap.info, bounds=Bounds(seconds=900, timeout=300))
    m = re.search(r'<script type="application/json" id="hv-data"([^>]*)>(.*?)</script>', payload.blocks, re.DOTALL)
    assert m is not None
    raw = m.group(2)
    return json.loads(gzip.decompress(base64.b64decode(raw)) if "gzip" in m.group(1) else raw), payload


def _check(name: str) -> None:
    """Every fusion drawn as a box has a picture, on big modules too since a fusion's picture is
    charged its own fused instructions rather than the whole module (ResNet50 had room for 61
    of its 90, MobileNetV3Small's training step for about 10)."""
    hlo = _post_text(CAPTURES / name)
    calls, bodies = hlo_fusions(hlo)
    owner: dict[str, str] = {}  # instruction name → the fusion it is or belongs to
    worth: set[str] = set()  # fusions with at least two instructions doing work
    for fusion, comp in calls.items():
        owner[fusion] = fusion
        body = bodies.get(comp, [])
        for inner, _ in body:
            owner[inner] = fusion
        if sum(1 for _, op in body if op not in NO_WORK) >= 2:
            worth.add(fusion)
    # a reduction's to_apply (often shared by several fusions) is drawn inside whichever box
    # calls it: its instructions say nothing about which box is which
    reducers = set(re.findall(r"to_apply=%?([\w.\-]+)", hlo))
    neutral = {inner for comp in reducers for inner, _ in bodies.get(comp, [])}
    assert worth, f"{name}: no fusion of two working instructions in post.hlo"

    data = _page_data(name)
    strings = data["strings"]
    post = next(i for i, s in enumerate(data["sides"]) if s["key"] == "post")
    side = data["sides"][post]
    off = side["offset"]

    def string(x):  # a data string, by its index
        return strings[x] if isinstance(x, int) else x

    drawn: dict[str, set[str]] = {}  # fusion → keys of the views drawing it as a box of its own
    for v in data["views"]:
        if v["opens"] and v["opens"].startswith("i:"):
            continue  # a fusion's own picture
        for col, gids, _scope, _tree in v["nodes"].values():
            if v["sides"][col] != post:
                continue
            names = [string(side["name"][g - off]) for g in gids]
            owners = {owner.get(n) for n in names if n not in neutral}
            if len(owners) == 1 and None not in owners:
                drawn.setdefault(next(iter(owners)), set()).add(v["key"])  # type: ignore[arg-type]
    opened = {v["opens"][len("i:post:"):]: v["parent"] for v in data["views"]
              if v["opens"] and v["opens"].startswith("i:post:")}
    boxed = {f: keys for f, keys in drawn.items() if f in worth}
    assert boxed, f"{name}: no view draws a fusion as a box of its own"
    missing = sorted(f for f in boxed if f not in opened)
    assert not missing, f"{name}: {len(missing)} of {len(boxed)} fusions drawn as a box have no picture: {missing[:8]}"
    astray = sorted((f, opened[f]) for f in boxed if f in opened and opened[f] not in boxed[f])
    assert not astray, f"{name}: fusion pictures going back to a view that does not draw them: {astray[:8]}"


@pytest.mark.requires_dot
@pytest.mark.parametrize("name", FAST)
def test_every_fusion_drawn_as_a_box_opens_from_its_view(name):
    _check(name)


@pytest.mark.requires_dot
@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_every_fusion_drawn_as_a_box_opens_from_its_view_big(name):
    _check(name)


def test_the_oracle_reads_fusions_and_their_bodies():
    text = """HloModule m

%fused_computation (param_0: f32[4], param_1: f32[4]) -> f32[4] {
  %param_0 = f32[4]{0} parameter(0)
  %param_1 = f32[4]{0} parameter(1)
  %add.1 = f32[4]{0} add(f32[4]{0} %param_0, f32[4]{0} %param_1)
  ROOT %maximum.2 = f32[4]{0} maximum(f32[4]{0} %add.1, f32[4]{0} %param_0), metadata={op_name="a/b(c)"}
}

ENTRY %main (Arg_0: f32[4]) -> f32[4] {
  %Arg_0 = f32[4]{0} parameter(0)
  ROOT %add_maximum_fusion = f32[4]{0} fusion(f32[4]{0} %Arg_0, f32[4]{0} %Arg_0), kind=kLoop, calls=%fused_computation
}
"""
    calls, bodies = hlo_fusions(text)
    assert calls == {"add_maximum_fusion": "fused_computation"}
    assert bodies["fused_computation"] == [("param_0", "parameter"), ("param_1", "parameter"), ("add.1", "add"),
                                           ("maximum.2", "maximum")]


# --- JAX's jit(f) is no layer name: the explorer names layers as stats --by scope does ----------

JAX = ["loops_vit", "flax_train_step", "jax_mlp"]


@pytest.mark.requires_dot
@pytest.mark.parametrize("name", JAX)
def test_the_explorer_names_no_layer_and_no_picture_with_jax_jit_wrappers(name):
    """Every op name of a JAX module starts with ``jit(f)/``; the explorer's layer names (the
    search results, the panel's "layer" row, the kernels' layers) and its pictures' titles (the
    breadcrumb) name the model's layers without it, and the function by its name."""
    assert re.search(r'op_name="p?jit\(', _post_text(CAPTURES / name)), "a JAX capture: op names start with jit(f)"
    data, payload = _page(name)
    wrapped = re.compile(r"\bp?jit\(")
    labels = data["scopes"]["label"]
    assert labels and not [s for s in labels if wrapped.search(s)], [s for s in labels if wrapped.search(s)][:5]
    # the scopes' own paths (as op names write them) do start with the wrapper: it was unwrapped
    assert any(wrapped.match(p) for p in data["scopes"]["path"])
    titles = [v["title"] for v in data["views"]]
    assert not [t for t in titles if wrapped.search(t or "")], [t for t in titles if wrapped.search(t or "")][:5]
    # the pictures name no box, block or part after the wrapper either (a cluster's second line,
    # the op names' own path, may: it is what the HLO's op_name says)
    svgs = [payload.picture_svg or ""]
    m = re.search(r'<script type="application/json" id="hv-svgs"([^>]*)>(.*?)</script>', payload.later, re.DOTALL)
    if m is not None:
        raw = m.group(2)
        svgs += [x or "" for x in json.loads(gzip.decompress(base64.b64decode(raw)) if "gzip" in m.group(1) else raw)]
    named = [t for svg in svgs for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)
             if re.match(r"(?:→ )?p?jit\([^)/]*\)(?: ·|$)", t)]
    assert not named, named[:5]
