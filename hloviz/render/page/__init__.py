"""Stage 4, *page*: the files a user opens.

In: pictures (SVG/PNG bytes) and the analyses they show. Out: files on disk, each written
whole or not at all (:mod:`.files`). :mod:`.html` and :mod:`.report` make the self-contained
report of ``hloviz show``, with :mod:`.memory` and :mod:`.pass_section` as its sections;
:mod:`.explorer` makes it interactive (every view drawn at build time, one inline script);
:mod:`.page` makes Graphviz's SVG fit a docs page (titled for screen readers, sized, themed); :mod:`.export` writes a scene as JSON
for people drawing it their way.
"""
