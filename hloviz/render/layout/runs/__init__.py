"""The Graphviz processes a picture is laid out by: :mod:`.graphviz_run` runs one ``dot`` per
graph under a timeout (or many at once), :mod:`.dotserver` keeps processes running for the many
small graphs of an explorer page, :mod:`.dot_process` talks to one such process, and
:mod:`._gvserver` is the library server it may start (a standalone program: the standard
library and Graphviz's own libraries only)."""
