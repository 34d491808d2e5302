"""Framework releases other than the installed one: ``--tf VERSION`` / ``--jax VERSION`` captures.

In: a framework name and a release. Out: a managed virtual environment holding that release and
this hloviz, and a capture run inside it. The modules, bottom up: :mod:`.index` (which releases
and Pythons the package index has), :mod:`.installers` (make an environment, install into it),
:mod:`.source` (put the running hloviz into it), :mod:`.envs` (the cache of environments, one per
release), :mod:`.env_files` (what in that cache is hloviz's, and deleting it), :mod:`.isolated`
(capture a function there). A package of its own because none of it is needed to capture with
the framework already installed.
"""
