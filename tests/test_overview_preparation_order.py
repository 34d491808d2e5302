"""Work computed from parameters alone stands, in the tree's order, where it is read.

XLA schedules a batch norm's ``Rsqrt`` of its moving variance (it reads parameters only) at the
top of an optimized module; where the layer's other work was fused into ops named by another
layer, the batch norm's scope holds that ``Rsqrt`` alone and ended, by the text, before the
first layer ran. NASNetMobile's optimized column (488 scopes, cut at the data flow's waists in
that order) put 19 such scopes from all over the network in its first box, with the stem, and
drew arrows from there to every cell (0.255 crossings an arrow).

The module here is written by the test: 40 cells, each reading the two before it (no cut
vertex, as NASNet's), each cell's batch norm a scope of its own holding only its ``Rsqrt``,
every ``Rsqrt`` first in the text. Oracles: the HLO the test wrote (which op reads which), and
which box holds each instruction (the overview as ``render`` draws it).
"""

from __future__ import annotations

import re

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

CELLS = 40


def _module(n: int = CELLS) -> str:
    meta = 'metadata={op_name="%s"}'
    lines = ["HloModule cells", "", "ENTRY %main (x: f32[1,8]) -> f32[1,8] {",
             f'  %x = f32[1,8]{{1,0}} parameter(0), {meta % "XLA_Args"}']
    for k in range(n):
        lines.append(f'  %w{k} = f32[8,8]{{1,0}} parameter({2 * k + 1}), {meta % "XLA_Args"}')
        lines.append(f'  %v{k} = f32[8]{{0}} parameter({2 * k + 2}), {meta % "XLA_Args"}')
    for k in range(n):  # every batch norm's rsqrt first, as XLA schedules them
        lines.append(f'  %rs{k} = f32[8]{{0}} rsqrt(f32[8]{{0}} %v{k}), {meta % f"net/batch_normalization_{k}/Rsqrt"}')
    prev2, prev = "x", "x"
    for k in range(n):  # the rest of each batch norm fused into its convolution's ops
        conv = meta % f"net/conv2d_{k}/MatMul"
        lines += [(f"  %mm{k} = f32[1,8]{{1,0}} dot(f32[1,8]{{1,0}} %{prev}, f32[8,8]{{1,0}} %w{k}), "
                   f"lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, {conv}"),
                  f"  %bs{k} = f32[1,8]{{1,0}} broadcast(f32[8]{{0}} %rs{k}), dimensions={{1}}, {conv}",
                  f"  %bn{k} = f32[1,8]{{1,0}} multiply(f32[1,8]{{1,0}} %mm{k}, f32[1,8]{{1,0}} %bs{k}), {conv}",
                  (f"  %add{k} = f32[1,8]{{1,0}} add(f32[1,8]{{1,0}} %bn{k}, f32[1,8]{{1,0}} %{prev2}), "
                   f"{meta % f'net/add_{k}/add'}")]
        prev2, prev = prev, f"add{k}"
    lines += [f"  ROOT %out = f32[1,8]{{1,0}} copy(f32[1,8]{{1,0}} %{prev}), {meta % 'XLA_Retvals'}", "}", ""]
    return "\n".join(lines)


def test_each_rsqrt_is_drawn_with_its_reader_or_as_its_own_layer_never_with_the_input():
    text = _module()
    # from the text: which instruction reads each rsqrt, and each instruction's op name
    reader = {m.group(2): m.group(1) for m in re.finditer(r"%(\w+) = \S+ broadcast\(f32\[8\]\{0\} %(rs\d+)\)", text)}
    op_name = dict(re.findall(r"%(\w+) = .*?op_name=\"([^\"]*)\"", text))
    assert len(reader) == CELLS
    box = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET)).node_of
    holds: dict[str, set[str]] = {}
    for name, b in box.items():
        holds.setdefault(b, set()).add(name)
    for rs, user in reader.items():
        own = {n for n in holds[box[rs]] if op_name.get(n) != "XLA_Args"}
        layer = op_name[rs].rsplit("/", 1)[0]
        # in the box of what reads it, or a box of its own layer alone (where the budget draws layers)
        assert box[rs] == box[user] or all(op_name[n].startswith(layer + "/") for n in own), (rs, sorted(own))
    firsts = {n for n in holds[box["x"]] if n.startswith("rs")}
    assert firsts <= {"rs0", "rs1"}, sorted(firsts)
