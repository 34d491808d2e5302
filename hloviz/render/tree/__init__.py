"""Stage 1, *tree*: what can become a box.

In: one parsed module (:class:`~hloviz.ir.HloModule`) and the analyses of it. Out: a
:class:`~.tree.Tree` — the module's own structure as nested nodes (:mod:`.nodes`), built by
:func:`~.tree.build_tree`: scopes of ``metadata.op_name`` (:mod:`.layers` routes every drawn
unit under them), sibling scopes grouped by name prefix (:mod:`.prefix_groups`), blocks found
by the data flow where names give none (:mod:`.blocks`, on :mod:`.dominators`) or, where no
rule finds one, cut at its narrowest waists (:mod:`.waists`), repeats of blocks built alike
folded as ``×N`` (:mod:`.repeat_runs`, :mod:`.structure`), a layer's backward pass beside its
forward (:mod:`.backward`), fusions and while/call bodies. :mod:`.model` holds the units (one
instruction, or a chain of one op found by :mod:`.chains`) that the tree's leaves stand for;
:mod:`.units` makes them from the module by the drawing rules.
Nothing here decides what is drawn.
"""
