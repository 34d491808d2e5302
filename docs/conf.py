"""The hloviz documentation: Sphinx + MyST markdown, every picture drawn by hloviz's own
``hloviz`` directive (hloviz/sphinx.py) from the saved captures in samples/captures/ while the
docs build — so the docs are the first user of the docs integration, and need neither
TensorFlow nor JAX.

Build: ``make docs`` (into docs/_build/html), or
``sphinx-build -W -b html docs docs/_build/html``; ``tests/test_docs_site.py`` builds it with
warnings as errors.
"""

project = "hloviz"
author = "the hloviz developers"
extensions = ["myst_parser", "hloviz.sphinx"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# The example sites (docs/example/, docs/example-mkdocs/) are built by their own tests.
exclude_patterns = ["_build", "example", "example-mkdocs", "**/.hloviz-cache"]
# `[text](page.md#a-heading)` links reach headings down to this level.
myst_heading_anchors = 4
html_title = "hloviz"
html_theme = "alabaster"
html_static_path: list[str] = []
# Pictures are cached beside this file between builds (a rebuild of unchanged docs runs no
# Graphviz); the folder is in docs/_build, which git ignores.
hloviz_cache_dir = "_build/hloviz-cache"
