"""HLO texts for the render tests, built in code so no test needs TensorFlow.

``layered_module(layers)`` is a model-shaped optimized module: per layer a loop fusion, a
``dot``, an input fusion (a reduction) and a multi-output fusion read through
get-tuple-element, with per-layer weight parameters — the repeated structure real models have.
Its size grows linearly (about 60 instructions per layer), so it also serves the speed checks.
"""

from __future__ import annotations


def layered_module(layers: int, *, ops_per_fusion: int = 12, with_while: bool = False) -> str:
    lines = ["HloModule layered, is_scheduled=true", ""]
    for i in range(layers):
        lines.append(f"%fused_loop.{i} (p0.{i}: f32[64,128], p1.{i}: f32[128]) -> f32[64,128] {{")
        lines.append(f"  %p0.{i} = f32[64,128]{{1,0}} parameter(0)")
        lines.append(f"  %p1.{i} = f32[128]{{0}} parameter(1)")
        lines.append(f"  %bc.{i} = f32[64,128]{{1,0}} broadcast(%p1.{i}), dimensions={{1}}")
        prev = f"%p0.{i}"
        for k in range(ops_per_fusion):
            op = ("add", "multiply", "tanh", "exponential")[k % 4]
            args = f"{prev}, %bc.{i}" if op in ("add", "multiply") else prev
            lines.append(f"  %e.{i}.{k} = f32[64,128]{{1,0}} {op}({args})")
            prev = f"%e.{i}.{k}"
        lines.append(f"  ROOT %out.{i} = f32[64,128]{{1,0}} maximum({prev}, %p0.{i})")
        lines.append("}")
        lines.append("")
        lines.append(f"%add_red.{i} (a.{i}: f32[], b.{i}: f32[]) -> f32[] {{")
        lines.append(f"  %a.{i} = f32[] parameter(0)")
        lines.append(f"  %b.{i} = f32[] parameter(1)")
        lines.append(f"  ROOT %s.{i} = f32[] add(%a.{i}, %b.{i})")
        lines.append("}")
        lines.append("")
        lines.append(f"%fused_reduce.{i} (q0.{i}: f32[64,128]) -> f32[64] {{")
        lines.append(f"  %q0.{i} = f32[64,128]{{1,0}} parameter(0)")
        lines.append(f"  %z.{i} = f32[] constant(0)")
        lines.append(f"  %sq.{i} = f32[64,128]{{1,0}} multiply(%q0.{i}, %q0.{i})")
        lines.append(f"  ROOT %r.{i} = f32[64]{{0}} reduce(%sq.{i}, %z.{i}), dimensions={{1}}, to_apply=%add_red.{i}")
        lines.append("}")
        lines.append("")
        lines.append(f"%fused_multi.{i} (m0.{i}: f32[64,128], m1.{i}: f32[64]) -> (f32[64,128], f32[64,128]) {{")
        lines.append(f"  %m0.{i} = f32[64,128]{{1,0}} parameter(0)")
        lines.append(f"  %m1.{i} = f32[64]{{0}} parameter(1)")
        lines.append(f"  %mb.{i} = f32[64,128]{{1,0}} broadcast(%m1.{i}), dimensions={{0}}")
        lines.append(f"  %md.{i} = f32[64,128]{{1,0}} divide(%m0.{i}, %mb.{i})")
        lines.append(f"  %mn.{i} = f32[64,128]{{1,0}} negate(%md.{i})")
        lines.append(f"  ROOT %mt.{i} = (f32[64,128]{{1,0}}, f32[64,128]{{1,0}}) tuple(%md.{i}, %mn.{i})")
        lines.append("}")
        lines.append("")
    if with_while:
        lines += [
            "%cond (c: (s32[], f32[64,128])) -> pred[] {",
            "  %c = (s32[], f32[64,128]{1,0}) parameter(0)",
            "  %ci = s32[] get-tuple-element(%c), index=0",
            "  %limit = s32[] constant(10)",
            "  ROOT %lt = pred[] compare(%ci, %limit), direction=LT",
            "}",
            "",
            "%body (w: (s32[], f32[64,128])) -> (s32[], f32[64,128]) {",
            "  %w = (s32[], f32[64,128]{1,0}) parameter(0)",
            "  %wi = s32[] get-tuple-element(%w), index=0",
            "  %wx = f32[64,128]{1,0} get-tuple-element(%w), index=1",
            "  %one = s32[] constant(1)",
            "  %wi2 = s32[] add(%wi, %one)",
            "  %wx2 = f32[64,128]{1,0} tanh(%wx)",
            "  ROOT %wt = (s32[], f32[64,128]{1,0}) tuple(%wi2, %wx2)",
            "}",
            "",
        ]
    lines.append("ENTRY %main (x: f32[64,128]) -> f32[64,128] {")
    lines.append("  %x = f32[64,128]{1,0} parameter(0)")
    prev = "%x"
    for i in range(layers):
        lines.append(f"  %w.{i} = f32[128,128]{{1,0}} parameter({2 * i + 1})")
        lines.append(f"  %bias.{i} = f32[128]{{0}} parameter({2 * i + 2})")
        lines.append(f"  %d.{i} = f32[64,128]{{1,0}} dot({prev}, %w.{i}), lhs_contracting_dims={{1}}, "
                     f"rhs_contracting_dims={{0}}, metadata={{op_name=\"layer_{i}/dense/MatMul\"}}")
        lines.append(f"  %f.{i} = f32[64,128]{{1,0}} fusion(%d.{i}, %bias.{i}), kind=kLoop, calls=%fused_loop.{i}, "
                     f"metadata={{op_name=\"layer_{i}/act\"}}")
        lines.append(f"  %rd.{i} = f32[64]{{0}} fusion(%f.{i}), kind=kInput, calls=%fused_reduce.{i}")
        lines.append(f"  %mo.{i} = (f32[64,128]{{1,0}}, f32[64,128]{{1,0}}) fusion(%f.{i}, %rd.{i}), kind=kLoop, "
                     f"calls=%fused_multi.{i}")
        lines.append(f"  %g0.{i} = f32[64,128]{{1,0}} get-tuple-element(%mo.{i}), index=0")
        lines.append(f"  %g1.{i} = f32[64,128]{{1,0}} get-tuple-element(%mo.{i}), index=1")
        lines.append(f"  %sum.{i} = f32[64,128]{{1,0}} add(%g0.{i}, %g1.{i})")
        prev = f"%sum.{i}"
    if with_while:
        lines.append("  %zero = s32[] constant(0)")
        lines.append(f"  %init = (s32[], f32[64,128]{{1,0}}) tuple(%zero, {prev})")
        lines.append("  %loop = (s32[], f32[64,128]{1,0}) while(%init), condition=%cond, body=%body")
        lines.append("  ROOT %res = f32[64,128]{1,0} get-tuple-element(%loop), index=1")
    else:
        lines.append(f"  ROOT %res = f32[64,128]{{1,0}} copy({prev})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def flat_module(layers: int) -> str:
    """A pre-optimization-shaped module: every op at the top level, no fusions (about 14
    instructions per layer), with TensorFlow-style op names."""
    lines = ["HloModule flat", "",
             "%add_f32 (a: f32[], b: f32[]) -> f32[] {", "  %a = f32[] parameter(0)", "  %b = f32[] parameter(1)",
             "  ROOT %s = f32[] add(%a, %b)", "}", "",
             "ENTRY %main (x: f32[64,128]) -> f32[64,128] {", "  %x = f32[64,128]{1,0} parameter(0)"]
    prev = "%x"
    for i in range(layers):
        md = f', metadata={{op_type="Dense" op_name="layer_{i}/dense"}}'
        lines += [
            f"  %w.{i} = f32[128,128]{{1,0}} parameter({2 * i + 1})",
            f"  %bias.{i} = f32[128]{{0}} parameter({2 * i + 2})",
            f"  %d.{i} = f32[64,128]{{1,0}} dot({prev}, %w.{i}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}{md}",
            f"  %bb.{i} = f32[64,128]{{1,0}} broadcast(%bias.{i}), dimensions={{1}}{md}",
            f"  %ab.{i} = f32[64,128]{{1,0}} add(%d.{i}, %bb.{i}){md}",
            f"  %t.{i} = f32[64,128]{{1,0}} tanh(%ab.{i}){md}",
            f"  %c.{i} = f32[] constant(2)",
            f"  %cb.{i} = f32[64,128]{{1,0}} broadcast(%c.{i}), dimensions={{}}",
            f"  %m.{i} = f32[64,128]{{1,0}} multiply(%t.{i}, %cb.{i}){md}",
            f"  %z.{i} = f32[] constant(0)",
            f"  %r.{i} = f32[64]{{0}} reduce(%m.{i}, %z.{i}), dimensions={{1}}, to_apply=%add_f32",
            f"  %rb.{i} = f32[64,128]{{1,0}} broadcast(%r.{i}), dimensions={{0}}",
            f"  %q.{i} = f32[64,128]{{1,0}} divide(%m.{i}, %rb.{i})",
            f"  %o.{i} = f32[64,128]{{1,0}} add(%q.{i}, {prev})",
        ]
        prev = f"%o.{i}"
    lines += [f"  ROOT %res = f32[64,128]{{1,0}} copy({prev})", "}"]
    return "\n".join(lines) + "\n"
