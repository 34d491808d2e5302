"""XLA's dump folders (``--xla_dump_to=DIR``) as input: the modules, passes and buffers in them.

In: a folder (or a tar archive of one) written by XLA. Out: the HLO text of the module asked for,
its per-pass snapshots, and the buffer assignment of the compile. The modules: :mod:`.archive`
(unpack a tar as untrusted input), :mod:`.module_choice` (which module ``--module`` names),
:mod:`.xla_dump` (read the folder), :mod:`.pass_dump` (per-pass snapshots), :mod:`.compile_dump`
(buffer assignment from the same compile). A package of its own because a dump folder is read
without TensorFlow or JAX, by rules of XLA's file names.
"""
