"""Pre→post: what became of each op of the traced function when XLA optimized it.

In: the pre-optimization module (and the TF graph's ops, when there is one) and the optimized
module. Out: for each op one status (on kernels, folded, eliminated …) with its evidence. The
modules, bottom up: :mod:`.names` (the names an op can carry after XLA inlined its caller),
:mod:`.unnamed_work` (ops whose work runs in instructions that lost their name), :mod:`.folding`
(work computed at compile time, by XLA or TensorFlow's bridge), :mod:`.mapping` (the status of
every op, from the three). A package of its own because these analyses read two modules at
once, where every other analysis reads one.
"""
