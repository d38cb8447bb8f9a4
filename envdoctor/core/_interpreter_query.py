"""What another interpreter's environment holds, read BY that interpreter (``envdoctor check
--python PATH``). Its source is run with ``PATH -c``: standard library only, nothing of envdoctor,
since none of it is installed there; it prints one marked JSON line, so whatever a
sitecustomize prints cannot corrupt the answer.

The doctor's own ``dists`` and ``python_info`` facts import :func:`dists` and :func:`python_facts`
from here (public as ``envdoctor.installed_distributions`` and ``envdoctor.python_facts``): one
reading, whichever interpreter runs it.
"""

import json
import os
import platform
import re
import site
import sys
import sysconfig

try:
    import importlib.metadata as md
except ImportError:  # before 3.8: the doctor then says the interpreter is too old
    md = None  # type: ignore[assignment]  # None stands for the module there

MARKER = "envdoctor-interpreter: "
_EXTENSION = re.compile(r"\.(?:so|pyd|dylib)(?:\.\d+)*,")


def _canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()  # packaging.utils.canonicalize_name


def _compiled(d):
    """Whether a distribution installs compiled code (from its RECORD; None when it has none, as
    conda and egg installs may). A torch or CUDA change breaks such a package's ABI: the user
    sees "undefined symbol" at import, so ``envdoctor diff`` flags them."""
    try:
        record = d.read_text("RECORD")
    except Exception:  # noqa: BLE001 - an unreadable dist-info must not stop the scan
        return None
    if record is None:
        return None
    return any(ext in record for ext in (".so", ".pyd", ".dylib")) and bool(_EXTENSION.search(record))


def dists():
    """{canonical name: {name, version, location, requires, installer, compiled}} for the first copy
    on sys.path of every installed distribution (what ``import`` would see), plus ``others``
    listing further copies (shadowed installs)."""
    out = {}  # type: dict  # (a type comment: old interpreters run this file)
    for d in md.distributions() if md is not None else ():
        try:
            name = d.metadata["Name"]
        except Exception:  # noqa: BLE001
            continue
        if not name:
            continue
        key = _canonical(name)
        location = str(getattr(d, "_path", "") or "")
        if key in out:
            out[key].setdefault("others", []).append({"version": d.version, "location": location})
            continue
        try:
            installer = (d.read_text("INSTALLER") or "").strip()
        except Exception:  # noqa: BLE001
            installer = ""
        out[key] = {"name": name, "version": d.version, "location": location, "requires": list(d.requires or []), "installer": installer}
        compiled = _compiled(d)
        if compiled is not None:
            out[key]["compiled"] = compiled
    return out


def include_dir():
    # Debian's posix_local scheme is mapped to posix_prefix, as triton/runtime/build.py does.
    scheme = sysconfig.get_default_scheme() if hasattr(sysconfig, "get_default_scheme") else sysconfig._get_default_scheme()  # type: ignore[attr-defined]  # private before 3.10
    if scheme == "posix_local":
        scheme = "posix_prefix"
    return sysconfig.get_paths(scheme=scheme)["include"]


def python_facts():
    """The interpreter itself: version, executable, the headers Triton's launcher build needs,
    where packages install (the ``python_info`` fact, whichever interpreter reads it)."""
    include = include_dir()
    paths = sysconfig.get_paths()
    return {
        "version": platform.python_version(),
        "version_info": list(sys.version_info[:3]),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "include_dir": include,
        "python_h": os.path.isfile(os.path.join(include, "Python.h")),
        "free_threading": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "purelib": paths.get("purelib"),
        "platlib": paths.get("platlib"),
        "user_site_enabled": bool(site.ENABLE_USER_SITE),
    }


def facts():
    # `-c` puts the working directory first on sys.path; a program's own directory is not part of
    # the environment (unless safe_path, 3.11+, left it out).
    path = list(sys.path)
    if path and not getattr(sys.flags, "safe_path", False):
        path = path[1:]
    return {
        **python_facts(),
        "prefix": sys.prefix,
        "base_prefix": sys.base_prefix,
        "sys_path": path,
        "no_site": bool(sys.flags.no_site),
        "dists": dists(),
    }


if __name__ == "__main__":
    sys.stdout.write(MARKER + json.dumps(facts(), default=str) + "\n")
