"""Helpers for the diff tests: renamed and reordered copies of a module, and small edits.

A renamed copy is what two XLA versions produce for the same program at best: every
instruction and computation renamed, computations and independent instructions printed in
another order. It is built on the IR, printed with :func:`hloviz.to_text` and parsed again, so
the copy is real HLO text and shares nothing with the original.
"""

from __future__ import annotations

import random

import hloviz
from hloviz.ir import HloModule
from hloviz.parser.attributes import names_in
from hloviz.printer import to_text

_NAMING = ("select", "scatter", "called_computations")


def _topological_shuffle(instructions, rng: random.Random):
    pending = {id(i): len({id(o) for o in i.operands} | {id(p) for p in i.control_predecessors}) for i in instructions}
    users: dict[int, list] = {id(i): [] for i in instructions}
    for i in instructions:
        for dep in {id(o): o for o in [*i.operands, *i.control_predecessors]}.values():
            users[id(dep)].append(i)
    ready = [i for i in instructions if pending[id(i)] == 0]
    out = []
    while ready:
        i = ready.pop(rng.randrange(len(ready)))
        out.append(i)
        for u in users[id(i)]:
            pending[id(u)] -= 1
            if pending[id(u)] == 0:
                ready.append(u)
    assert len(out) == len(instructions)
    return out


def renamed_copy(text: str, *, seed: int = 0, drop_metadata: bool = False, reorder: bool = True) -> HloModule:
    """A copy of the module in ``text`` with new names everywhere (and, by default, new order)."""
    module = hloviz.parse(text)
    rng = random.Random(seed)
    comp_names = {}
    for k, comp in enumerate(module.computations):
        comp_names[comp.name] = f"renamed_comp_{rng.randrange(10**6)}_{k}"
    for comp in module.computations:
        comp.name = comp_names[comp.name]
        comp.by_name = {}
        for j, inst in enumerate(comp.instructions):
            inst.name = f"v{rng.randrange(10**6)}.{j}"
            comp.by_name[inst.name] = inst
            attributes = dict(inst.attributes)
            for key in _NAMING:
                raw = attributes.get(key)
                if raw is not None:
                    names = [comp_names[n] for n in names_in(raw)]
                    braced = raw.strip().startswith("{")
                    attributes[key] = ("{" + ", ".join(f"%{n}" for n in names) + "}") if braced \
                        else f"%{names[0]}"
            if drop_metadata:
                attributes.pop("metadata", None)
            if attributes != inst.attributes:
                inst.attributes = attributes
        if reorder:
            comp.instructions = _topological_shuffle(comp.instructions, rng)
    module.by_name = {c.name: c for c in module.computations}
    if reorder:
        entry = [c for c in module.computations if c.is_entry]
        rest = [c for c in module.computations if not c.is_entry]
        rng.shuffle(rest)
        # Callees must still be printed before their callers for some readers; XLA's does not care.
        module.computations = rest + entry
    return hloviz.parse(to_text(module), filename="<renamed copy>")


def edited(text: str, edit) -> str:
    """``text`` after ``edit(module)`` changed its IR, printed again."""
    module = hloviz.parse(text)
    edit(module)
    return to_text(module)


def change_constant(module: HloModule, name: str, literal: str) -> None:
    inst = module.entry.instruction(name)
    assert inst.opcode == "constant"
    inst.literal = literal


def change_opcode(module: HloModule, name: str, opcode: str) -> None:
    module.entry.instruction(name).opcode = opcode


def insert_after(module: HloModule, name: str, opcode: str = "negate") -> str:
    """Insert ``opcode(name)`` and make every user of ``name`` use it instead; returns its name."""
    from hloviz.ir import Instruction

    comp = module.entry
    target = comp.instruction(name)
    new = Instruction(f"{name}.inserted", opcode, target.shape)
    new.operands = [target]
    for user in comp.instructions:
        user.operands = [new if o is target else o for o in user.operands]
    comp.add(new)
    comp.instructions.remove(new)
    comp.instructions.insert(comp.instructions.index(target) + 1, new)
    if comp.root is target:
        comp.root = new
    return new.name


def layered_module(layers: int, variant: int = 0) -> str:
    """A synthetic optimized module of ``layers`` repeated blocks (16 instructions each).

    Each block: ``dot`` → a loop ``fusion`` (add, multiply, tanh, subtract of a broadcast
    constant) → ``reduce`` → ``broadcast`` → ``add`` → ``copy``. ``variant=1`` is the "other
    version": every 20th block (k % 20 == 7) has a different constant in its fused
    computation, every 50th (k % 50 == 13) a ``negate`` between its dot and its fusion, and
    every name differs. Used to check matching at scale against known differences.
    """
    v = variant
    out = [f"HloModule layered_{v}", "",
           f"%sum_{v} (a: f32[], b: f32[]) -> f32[] {{", "  %a = f32[] parameter(0)", "  %b = f32[] parameter(1)",
           "  ROOT %s = f32[] add(%a, %b)", "}", ""]
    entry = [f"ENTRY %main_{v} (x: f32[64,64]) -> f32[64,64] {{", f"  %x_{v} = f32[64,64]{{1,0}} parameter(0)"]
    prev = f"x_{v}"
    for k in range(layers):
        def md(op: str, k: int = k) -> str:
            return f', metadata={{op_type="{op}" op_name="layer_{k}/{op}" source_file="m.py" source_line={10 + k % 50}}}'

        constant = k % 7 + (1 if v and k % 20 == 7 else 0)
        n = f"{v}_{k}"
        out += [f"%fused_{n} (p0: f32[64,64], p1: f32[64,64]) -> f32[64,64] {{",
                f"  %p0.{n} = f32[64,64]{{1,0}} parameter(0)", f"  %p1.{n} = f32[64,64]{{1,0}} parameter(1)",
                f"  %add.{n} = f32[64,64]{{1,0}} add(%p0.{n}, %p1.{n}){md('Add')}",
                f"  %mul.{n} = f32[64,64]{{1,0}} multiply(%add.{n}, %p0.{n}){md('Mul')}",
                f"  %c.{n} = f32[] constant({constant})",
                f"  %bc.{n} = f32[64,64]{{1,0}} broadcast(%c.{n}), dimensions={{}}",
                f"  %t.{n} = f32[64,64]{{1,0}} tanh(%mul.{n}){md('Tanh')}",
                f"  ROOT %sub.{n} = f32[64,64]{{1,0}} subtract(%t.{n}, %bc.{n}){md('Sub')}", "}", ""]
        entry.append(f"  %w.{n} = f32[64,64]{{1,0}} constant({{...}}){md('Const')}")
        entry.append(f"  %dot.{n} = f32[64,64]{{1,0}} dot(%{prev}, %w.{n}), lhs_contracting_dims={{1}}, "
                     f"rhs_contracting_dims={{0}}{md('MatMul')}")
        src = f"dot.{n}"
        if v and k % 50 == 13:
            entry.append(f"  %neg.{n} = f32[64,64]{{1,0}} negate(%dot.{n}){md('Neg')}")
            src = f"neg.{n}"
        entry.append(f"  %fusion.{n} = f32[64,64]{{1,0}} fusion(%{src}, %{prev}), kind=kLoop, calls=%fused_{n}{md('Sub')}")
        entry.append(f"  %zero.{n} = f32[] constant(0)")
        entry.append(f"  %red.{n} = f32[64]{{0}} reduce(%fusion.{n}, %zero.{n}), dimensions={{1}}, to_apply=%sum_{v}"
                     f"{md('Sum')}")
        entry.append(f"  %rb.{n} = f32[64,64]{{1,0}} broadcast(%red.{n}), dimensions={{0}}{md('Sum')}")
        entry.append(f"  %out.{n} = f32[64,64]{{1,0}} add(%fusion.{n}, %rb.{n}){md('AddN')}")
        entry.append(f"  %cp.{n} = f32[64,64]{{1,0}} copy(%out.{n})")
        prev = f"cp.{n}"
    entry += [f"  ROOT %result_{v} = f32[64,64]{{1,0}} copy(%{prev})", "}"]
    return "\n".join(out + entry) + "\n"
