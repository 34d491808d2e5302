"""Stage 2, *cut*: which boxes one picture draws, in which order, with which labels.

In: a :class:`~hloviz.render.tree.tree.Tree`, a node budget and the user's ``--scope``,
``--depth`` and focus. Out: the boxes and arrows of a :class:`~hloviz.render.scene.Scene`.
:mod:`.cut` finds the deepest cut through the tree that fits the budget; :mod:`.focus`
moves it onto what the user asked about; :mod:`.weights` folds weights into the box of the layer that
reads them and :mod:`.overview` titles blocks, folds plumbing and unframes split scopes for the
default overview; :mod:`.apply` turns closed nodes into single units and open ones into
clusters; :mod:`.order` gives each its place in the program and :mod:`.ranks` ranks the picture by it; :mod:`.assemble` writes the scene, with
:mod:`.labels` for each box's text and :mod:`.arrows` for arrows that become stubs;
:mod:`.notes` says in the picture's notes what the cut closed and why.
"""
