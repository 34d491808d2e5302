"""The words hloviz prints, each with one meaning — defined here once, used by every output.

An inspection tool that says "ops" for three different counts is worse than none, so every
number hloviz prints (``stats`` tables and JSON, the verdict, ``show``'s summary and report,
picture labels, ``diff``) is named with a word from this module, and two counts that mean
different things never share a word. The docs' glossary (docs/stats.md) is :func:`markdown` of this module
(a test checks that it is).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One word of hloviz's vocabulary: the ``word`` (and its ``plural``) and what it means."""

    word: str
    plural: str
    meaning: str

    def count(self, n: int) -> str:
        """``1 op`` / ``3 ops``."""
        return f"{n} {self.word if n == 1 else self.plural}"


OP = Term("op", "ops",
          "one operation of the traced function as the framework built it: a node of TensorFlow's graph "
          "(`dense/MatMul`, a `Const`, an `_Arg`) or, for JAX and plain HLO files, one name of "
          "`metadata.op_name` (a JAX equation's name stack). HLO instructions carry their op's name, "
          "which is how hloviz follows an op through XLA.")
INSTRUCTION = Term("instruction", "instructions",
                   "one line of HLO (`%add.3 = f32[8] add(...)`). One op becomes one or more instructions; "
                   "after optimization one instruction may carry the work of several ops.")
WORK_INSTRUCTION = Term("instruction doing work", "instructions doing work",
                        "an instruction that computes something: every opcode except bookkeeping "
                        "(`parameter`, `constant`, `tuple`, `get-tuple-element`, `bitcast`, …) and control "
                        "flow (`while`, `call`, `conditional`). A kernel's size is its instructions doing "
                        "work, written `N instructions` in every output.")
KERNEL = Term("kernel", "kernels",
              "what runs on its own in the optimized module: a fusion (everything inside it runs as one "
              "kernel) or an unfused instruction doing work (`dot`, `copy`, `reduce`, …). Kernels in "
              "`while`/`conditional` bodies are counted once, in their body.")
FUSION = Term("fusion", "fusions",
              "a kernel made of several instructions XLA fused (`kLoop`, `kInput`, `kOutput`, `kCustom`).")
FOLDED_CONSTANT = Term("folded constant", "folded constants",
                       "a constant that holds the result of ops computed at compile time (a *fold*). Each is "
                       "listed once, with the ops it came from — or, where no op can be named, why not.")
CONSTANT = Term("constant", "constants", "an HLO `constant` instruction: a literal value.")
FOLDED_BY_XLA = Term("folded by XLA", "folded by XLA",
                     "a constant of the optimized module whose value no constant of the pre-optimization "
                     "module has: XLA computed it from the pre-optimization instructions.")
FOLDED_BY_TENSORFLOW = Term("folded by TensorFlow", "folded by TensorFlow",
                            "a constant TensorFlow's bridge computed from graph ops (`Shape`, `Cast` of a "
                            "`Const`, …) before XLA saw the function: it is already in the pre-optimization "
                            "HLO, where those ops have no instruction.")
NEW_CONSTANT = Term("new constant", "new constants",
                    "a constant of the optimized module that no pre-optimization constant has and that "
                    "holds no op's work (XLA wrote it while rewriting, e.g. an index or a padding value): "
                    "not a fold.")
COMPUTED_AT_COMPILE_TIME = Term("computed at compile time", "computed at compile time",
                                "what happened to a folded op's work: done once while compiling, not by a "
                                "kernel.")

# --- What became of an op: every op of the traced function has exactly one status -------------

IN_KERNELS = Term("in kernels", "in kernels",
                  "the op's work runs in one or more kernels: a kernel's instructions carry its name, or its "
                  "name is on the `get-tuple-element` that takes its result out of a kernel of several results "
                  "(an argmax's reduction fusion, which computes the `reduce_max` beside it), or it is a loop or "
                  "a conditional XLA kept, whose bodies run kernels without a name of their own (a backward "
                  "`while_grad`, whose body's ops TensorFlow names under the forward loop), or (a weight "
                  "gradient XLA rebuilt without its name) a kernel's data flow shows it computes the op's value.")
FOLDED = Term("folded", "folded",
              "the op was computed at compile time (by XLA or TensorFlow's bridge): its value is in a "
              "folded constant, or in a constant that was already there (XLA merged the equal values), "
              "or nothing used it.")
ELIMINATED = Term("eliminated", "eliminated",
                  "the op did work before optimization but left no trace: no kernel carries it or computes "
                  "its value, and it was not computed at compile time — a reshape that became a `bitcast`, a transpose folded into "
                  "a layout, dead code (a gradient nothing uses), or work identical to another op's that XLA "
                  "computes once (Adam's `Pow` for each variable, Adafactor's `1 - (step + 1) ** -0.8` for "
                  "each weight: never *folded*, even next to a folded constant, as they read the step counter).")
NO_OP_NAME = Term("no op name after XLA's passes", "no op name after XLA's passes",
                  "the op did work before optimization and its result was used, but no instruction of the "
                  "optimized module carries its name and hloviz could not follow its work there by data flow: "
                  "XLA rebuilds some instructions without their `op_name` (a weight gradient that "
                  "`convolution-canonicalization` rewrote; a random draw, `tf.random.uniform`, which XLA expands "
                  "into unnamed bit arithmetic and never folds, though the constants of that arithmetic carry its "
                  "name). Its work may well run; hloviz does not call it eliminated.")
NO_WORK = Term("no work", "no work",
               "the op never computes anything, so it has no kernel: a literal (`Const`), the function's "
               "arguments and results (`_Arg`, `_Retval`, `Placeholder`), plumbing (`Identity`, `NoOp`, "
               "`ReadVariableOp`, `AssignVariableOp`, …) — each named by its type.")

#: Status key (in ``stats --json``) → its term, in the order every output lists them.
STATUSES: dict[str, Term] = {
    "kernels": IN_KERNELS, "folded": FOLDED, "eliminated": ELIMINATED, "no_op_name": NO_OP_NAME,
    "no_work": NO_WORK,
}

#: Every term, in the order the docs' glossary lists them.
TERMS: tuple[Term, ...] = (
    OP, INSTRUCTION, WORK_INSTRUCTION, KERNEL, FUSION, CONSTANT, FOLDED_CONSTANT, FOLDED_BY_XLA, FOLDED_BY_TENSORFLOW,
    NEW_CONSTANT, COMPUTED_AT_COMPILE_TIME, IN_KERNELS, FOLDED, ELIMINATED, NO_OP_NAME, NO_WORK,
)

#: Who folded a constant (``FoldedConstant.by``) → how outputs say it.
FOLDED_BY: dict[str, str] = {"xla": "by XLA", "tensorflow": "by TensorFlow"}


def markdown() -> str:
    """The glossary as docs/stats.md shows it: a table, one row per term."""
    rows = ["| word | meaning |", "|---|---|"]
    rows += [f"| **{t.word}** | {t.meaning} |" for t in TERMS]
    return "\n".join(rows)
