"""An example Sphinx site (MyST markdown) whose pictures hloviz draws while the docs build.

Build it with ``sphinx-build -b html docs/example build/example`` after
``pip install 'hloviz[sphinx]'``; tests/test_docs_sphinx.py builds it from the saved captures
in samples/captures, so it needs neither TensorFlow nor JAX.
"""

project = "hloviz example"
extensions = ["myst_parser", "hloviz.sphinx"]
# hloviz_theme = "auto"        # light, dark or auto (the default: follows the page's scheme)
# hloviz_embed = "inline"      # or "img"
# hloviz_cache_dir = None      # default: <doctrees>/hloviz, kept between builds
exclude_patterns = ["_build"]
