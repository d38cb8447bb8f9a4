"""An example envdoctor plugin (see the README, "Writing a plugin").

Install it next to envdoctor (``pip install examples/plugin``) and its checks appear in
``envdoctor list`` and in every report, exactly like the built-in ones.
"""

import os
import shutil

from envdoctor import Unavailable, check, fact, fail, ok, warn


@fact("scratch")
def scratch(env):
    """Where the site's jobs write scratch data: $SCRATCH, else the temporary directory."""
    path = env.get("SCRATCH") or env.get("TMPDIR") or "/tmp"
    if not os.path.isdir(path):
        raise Unavailable(f"scratch directory {path} does not exist")
    return {"path": path, "free": shutil.disk_usage(path).free}


@check("example.scratch_writable", tags=("build",))
def scratch_writable(scratch):
    """The scratch directory is writable"""
    if not os.access(scratch["path"], os.W_OK):
        return fail(f"{scratch['path']} is not writable by this user", hint=f"chmod u+w {scratch['path']} or set SCRATCH")
    return ok(f"{scratch['path']} is writable")


@check("example.scratch_space", tags=("build",))
def scratch_space(scratch):
    """The scratch directory has room for a checkpoint"""
    gib = scratch["free"] / 2**30
    if gib < 1:
        return warn(f"only {gib:.1f} GiB free in {scratch['path']}", hint="free space or point SCRATCH at a larger volume")
    return ok(f"{gib:.0f} GiB free in {scratch['path']}")
