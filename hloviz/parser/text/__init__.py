"""The text below HLO's grammar: lines, brackets and statements, before any instruction is read.

These modules take the input as characters and know nothing of shapes, opcodes or the IR being
built (they import nothing of the parser outside this folder); the readers above them
(:mod:`~hloviz.parser.module`, :mod:`~hloviz.parser.body`, :mod:`~hloviz.parser.instructions`)
use them to find where things start and end:

* :mod:`~hloviz.parser.text.lines`: the text as lines, split a block at a time as the reader
  reaches them, runs of blank and comment lines stepped over at once;
* :mod:`~hloviz.parser.text.scan`: bracket matching and top-level splitting, strings skipped;
* :mod:`~hloviz.parser.text.reflow`: the text rewritten one statement per line, for the second
  reading of HLO laid out in unusual ways.

They are a package of their own so that the parser's folder holds its readers, each a concept of
HLO, and the text-level helpers they share sit one level down.
"""
