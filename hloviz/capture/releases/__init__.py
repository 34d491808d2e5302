"""Framework releases other than the installed one: ``--tf VERSION`` / ``--jax VERSION`` captures.

In: a framework name and a release. Out: a managed virtual environment holding that release and
this hloviz, and a capture run inside it. The modules, bottom up: :mod:`.index` (which releases
and Pythons the package index has), :mod:`.installers` (make an environment, install into it),
:mod:`.source` (put the running hloviz into it), :mod:`.frameworks` (what ``--tf``/``--jax`` name),
:mod:`.env_files` (what in the cache is hloviz's, and deleting it), :mod:`.cache` (the environments
in the cache: list, hold, remove), :mod:`.envs` (build one per release), :mod:`.isolated`
(capture a function there). A package of its own because none of it is needed to capture with
the framework already installed.
"""
