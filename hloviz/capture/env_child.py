"""The capture that runs *inside* a managed environment (``python -I -m hloviz.capture.env_child REQ``).

:mod:`hloviz.capture.isolated` starts the environment's interpreter on this module with a
request file (target, ``--arg`` specs, device). It captures exactly as ``hloviz dump`` would —
:func:`hloviz.capture.load_target` and :func:`hloviz.capture.save_capture`, no CLI layer — and
writes ``result.json`` beside the capture: the notes for the user, or the error (its type,
message and hint), so that the parent raises the same error the user would get from a capture in
their own environment. Only the standard library and hloviz are imported here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    out = Path(request["out"])
    from hloviz.capture import load_target, save_capture
    from hloviz.errors import HlovizError

    notes: list[str] = []
    try:
        cap = load_target(request["target"], args=tuple(request.get("args") or ()), device=request.get("device"),
                          verbose=bool(request.get("verbose")), notify=notes.append)
        save_capture(cap, out / "capture")
        result: dict = {"ok": True, "notes": notes}
    except HlovizError as err:
        result = {"ok": False, "type": type(err).__name__, "message": str(err.args[0]) if err.args else "",
                  "hint": err.hint, "notes": notes}
    (out / "result.json").write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
