"""The probe worker's main loop. Runs in a child interpreter, never in the doctor itself.

Reads one JSON request per line on stdin ({"target": "module:function", "kwargs": {...}}),
calls the function and writes one JSON response line to the file descriptor given as argv[1],
so that whatever the target prints (torch warnings, compiler output) cannot corrupt the
protocol. Kept free of envdoctor imports so it starts fast and cannot be broken by them.
"""

import importlib
import json
import os
import sys
import traceback


def _respond(out, payload):
    try:
        text = json.dumps(payload, default=repr)
    except (TypeError, ValueError) as e:
        text = json.dumps({"ok": False, "exc_type": "TypeError", "message": f"result is not JSON: {e}"})
    out.write(text + "\n")
    out.flush()


def main(argv=None):
    argv = sys.argv if argv is None else argv
    out = os.fdopen(int(argv[1]), "w", encoding="utf-8")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            module, _, name = req["target"].partition(":")
            func = getattr(importlib.import_module(module), name)
            value = func(**req.get("kwargs", {}))
            payload = {"ok": True, "value": value}
        except BaseException as e:  # noqa: BLE001 - everything is reported to the parent
            payload = {
                "ok": False,
                "exc_type": type(e).__name__,
                "message": str(e)[:4000],
                "traceback": traceback.format_exc()[-6000:],
            }
        sys.stdout.flush()
        sys.stderr.flush()
        _respond(out, payload)


if __name__ == "__main__":
    main()
