"""Stage 3, *layout*: scenes placed on a page by Graphviz.

In: one or more :class:`~hloviz.render.scene.Scene` (the columns of a picture). Out: SVG or
PNG bytes. :mod:`.dot` writes DOT text (pure; user text escaped by
:mod:`~hloviz.render.quoting`), its statements by :mod:`.dot_writer` and the texts of a picture
laid out in parts by :mod:`.dot_parts`; the Graphviz processes are
:mod:`.runs`' (:mod:`.runs.graphviz_run` runs ``dot`` under a timeout and normalises its SVG;
:mod:`.runs.dotserver` keeps ``dot`` processes running for many small graphs);
:mod:`.compose` lays a picture's columns and parts out by ``dot`` processes at once and joins
them (:mod:`.svgjoin`, :mod:`.positions`); :mod:`.wrap`, :mod:`.parts`, :mod:`.wrap_round` and
:mod:`.block_round` cut a long column into parts with connectors; :mod:`.blocklayout` is
``--layout blocks``; :mod:`.sidebyside` draws pre and post as two columns of one picture.
"""
