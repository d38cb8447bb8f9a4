"""Triton: installed as torch pins it, one copy only, and able to build and run its kernels.

Everything here is read without importing triton: its package directory is located with
``importlib.util.find_spec`` (which does not execute ``triton/__init__.py``), its version is
read from that file's text, and its bundled ``ptxas`` is run with ``--version`` and a timeout.
Triton builds a small C launcher the first time it runs a kernel (``triton/runtime/build.py``),
which is why a C compiler, ``Python.h`` and ``libcuda.so.1`` matter long before any GPU work.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from envdoctor import TRITON_DISTS, Fix, Item, Result, Status, check, env_fix, fact, fail, ok, pip_fix, skip, warn, worst
from envdoctor import run_command as run
from envdoctor_checks._fixes import directory_fix, system_package
from envdoctor_checks._lazy import lazy
from envdoctor_checks.packages import canonical, package_dir, requires

release_data = lazy("envdoctor_checks._release_data")
dirs = lazy("envdoctor_checks._dirs")  # the cache directory's probe and verdict: live checks only

# TRITON_DISTS (public, envdoctor.TRITON_DISTS): every distribution that installs the
# top-level ``triton`` package (A7): only one may be present.


# The oldest ptxas (CUDA release) that knows each GPU architecture; an older one stops with
# "ptxas fatal : Value 'sm_121a' is not defined for option 'gpu-name'".
PTXAS_MIN_FOR_ARCH = {
    (7, 0): (9, 0),
    (7, 5): (10, 0),
    (8, 0): (11, 0),
    (8, 6): (11, 1),
    (8, 7): (11, 4),
    (8, 9): (11, 8),
    (9, 0): (12, 0),
    (10, 0): (12, 8),
    (10, 1): (12, 8),
    (10, 3): (12, 9),
    (11, 0): (13, 0),
    (12, 0): (12, 8),
    (12, 1): (12, 9),
}


def parse_cc(cc: str) -> tuple[int, int] | None:
    try:
        major, minor = str(cc).split(".", 1)
        return int(major), int(minor)
    except ValueError:
        return None


def parse_release(text: str) -> str | None:
    """``release 12.8`` from ``ptxas --version`` / ``nvcc --version`` output."""
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else None


def same_release(a: str, b: str) -> bool:
    """3.4.0 and 3.4.0+git1a2b3c4d are the same release; unparsable versions are not judged."""
    try:
        return Version(a).release == Version(b).release
    except InvalidVersion:
        return True


def major_minor(version: str) -> tuple[int, int] | None:
    try:
        rel = Version(version).release
    except InvalidVersion:
        return None
    return (rel[0], rel[1] if len(rel) > 1 else 0)


# ---------------------------------------------------------------- the torch → triton pin (A6)


@dataclass(frozen=True)
class TritonRequirement:
    """torch's own Requires-Dist on a Triton distribution, with its marker evaluated here."""

    text: str
    name: str  # canonical: triton, pytorch-triton, pytorch-triton-rocm, ...
    specifier: str
    marker: str
    applies: bool


def torch_triton_requirement(torch_dist: Mapping) -> TritonRequirement | None:
    """The Triton requirement torch's metadata declares, or None (CPU builds declare none)."""
    found = requires(torch_dist)
    if not found:
        return None  # (a pasted listing has no Requires-Dist: nothing to parse)
    from packaging.markers import InvalidMarker  # on use: `envdoctor list` stays light

    for line, req in found:
        name = canonical(req.name)
        if name not in TRITON_DISTS:
            continue
        marker = str(req.marker) if req.marker else ""
        try:
            # An extra-only requirement is not a base dependency: evaluated with no extra, it is false.
            applies = req.marker.evaluate({"extra": ""}) if req.marker else True
        except InvalidMarker:
            applies = True
        return TritonRequirement(line, name, str(req.specifier), marker, bool(applies))
    return None


def satisfies(specifier: str, version: str) -> bool:
    """``==3.6.0`` or ``~=3.8.0`` against an installed version (pre-releases count: nightlies)."""
    exact = specifier.removeprefix("==")
    if exact != specifier and not any(c in exact for c in "*,<>=!~ "):  # a plain pin: no specifier parser to load
        try:
            want, have = Version(exact), Version(version)
        except InvalidVersion:
            return False
        return want == (have if want.local else Version(have.public))  # a pin without a local part ignores the installed one's
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # on use: most triages need none

    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def read_init_version(pkg_dir: str) -> str | None:
    """``__version__`` from ``triton/__init__.py`` by regex: the files, not the dist-info, speak."""
    try:
        with open(os.path.join(pkg_dir, "__init__.py"), encoding="utf-8", errors="replace") as f:
            text = f.read(64 * 1024)
    except OSError:
        return None
    m = re.search(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", text, re.MULTILINE)
    return m.group(1) if m else None


def read_triton_package(pkg_dir: str) -> dict:
    nvidia_bin = os.path.join(pkg_dir, "backends", "nvidia", "bin")
    tools = {}
    for tool in ("ptxas", "ptxas-blackwell"):
        path = os.path.join(nvidia_bin, tool)
        tools[tool] = path if os.path.isfile(path) else None
    return {
        "location": pkg_dir,
        "version": read_init_version(pkg_dir),
        "nvidia_backend": os.path.isdir(os.path.join(pkg_dir, "backends", "nvidia")),
        "bundled": tools,
    }


@fact("triton_pkg", ask="the output of `pip list | grep -i triton`")
def triton_pkg(interpreter=None) -> dict:
    """Where ``import triton`` would load from, and what its files say; never imported."""
    return read_triton_package(package_dir("triton", interpreter))


def installed_tritons(dists: Mapping) -> list[dict]:
    return [dists[n] for n in TRITON_DISTS if n in dists]


def release_table_pin(torch_version: str) -> tuple[str, str] | None:
    """(specifier, what it is) for the Triton a torch release needs, from the offline release
    table: the release's own pin, or for a source/pre-release build of a known line that line's
    Triton minor (``==3.2.*``)."""
    pin = release_data.triton_pin_for(torch_version)
    if pin is not None:
        return pin.specifier, f"the {pin.package}{pin.specifier} that torch {torch_version.split('+')[0]} wheels pin"
    line = release_data.torch_line(torch_version)
    if line is None:
        return None
    pins = {r.triton.specifier for v, r in release_data.torch_releases().items() if r.line.line == line.line and r.triton}
    found = [major_minor(s.lstrip("=~")) for s in pins]
    minors = {mm for mm in found if mm is not None}
    if len(minors) != 1 or None in found:
        return None
    major, minor = minors.pop()
    return f"=={major}.{minor}.*", f"Triton {major}.{minor}.x, which the torch {line.line} releases pin"


def unpinned_cuda_torch(torch, present, python_info=None):
    """A CUDA torch that declares no Triton (a source build, conda, an edited METADATA) still
    needs the Triton of its release: without a check, Inductor fails with
    "cannot import name 'triton_key'"."""
    table = release_table_pin(torch["version"])
    if table is None:
        return skip(f"torch {torch['version']} declares no Triton dependency and the release table does not know it")
    spec, what = table
    why = f"torch {torch['version']} declares no Triton dependency (a source build, conda or an edited install); it needs {what}"
    if not present:
        return skip(f"{why}; no Triton is installed (compile.triton_available judges that)")
    wrong = [d for d in present if not satisfies(spec, d["version"])]
    if not wrong:
        return ok(f"{', '.join(d['name'] + ' ' + d['version'] for d in present)}: {what} (release table; torch itself pins none)")
    exact = spec.removeprefix("==") if spec.startswith("==") and "*" not in spec else None
    target = f"triton=={exact}" if exact else f"triton{spec}"
    return fail(
        f"{', '.join(d['name'] + ' ' + d['version'] for d in wrong)} is installed; {why}. Inductor imports Triton internals "
        "that move between releases (\"cannot import name 'triton_key'\")",
        f"pip install --force-reinstall --no-deps '{target}'",
        details={"expected": spec, "source": "release table (envdoctor_checks/data/torch_releases.json)"},
        fixes=[pip_fix(python_info, "install", "--force-reinstall", "--no-deps", target)],
    )


def _reinstall(python_info, present: list[dict], pin: str) -> list[Fix]:
    """Uninstall every Triton distribution, then install the pinned one (as data)."""
    return [pip_fix(python_info, "uninstall", "-y", *(d["name"] for d in present)), pip_fix(python_info, "install", pin)]


def _pin_not_installed(torch: dict, pin: str, present: list[dict], install: str, install_fix: Fix, python_info) -> Result:
    others = ", ".join(f"{d['name']} {d['version']}" for d in present)
    if others:
        return fail(
            f"torch {torch['version']} requires {pin} but {others} is installed instead",
            f"pip uninstall -y {' '.join(d['name'] for d in present)} && {install}",
            fixes=[pip_fix(python_info, "uninstall", "-y", *(d["name"] for d in present)), install_fix],
        )
    return fail(
        f"torch {torch['version']} requires {pin} but it is not installed; torch.compile will raise "
        "'TritonMissing: Cannot find a working triton installation'",
        install,
        fixes=[install_fix],
    )


@check("triton.torch_pin", tags=("build",), sources=("live", "pasted"))
def torch_pin(dists, torch_build=None, triton_pkg=None, python_info=None):
    """Triton matches the version torch pins"""
    torch = dists.get("torch")
    if torch is None:
        return skip("torch is not installed")
    req = torch_triton_requirement(torch)
    present = installed_tritons(dists)
    if req is None:
        kind = torch_build.get("kind") if torch_build else None
        if kind == "cuda":
            return unpinned_cuda_torch(torch, present, python_info)
        why = "a CPU build; torch.compile uses Inductor's C++ backend there" if kind == "cpu" else "it declares no Triton dependency"
        extra = f"; {', '.join(d['name'] + ' ' + d['version'] for d in present)} is installed on its own" if present else ""
        return skip(f"torch {torch['version']} does not depend on Triton: {why}{extra}")
    if not req.applies:
        # A missing Triton is expected where the marker is false (Windows, old aarch64 wheels,
        # Python versions torch had no Triton for); compile.triton_available explains the consequence.
        where = f"torch {torch['version']} requires {req.name} only where `{req.marker}`, which is false here"
        if not present:
            return skip(f"{where}, so no Triton is expected")
        return ok(f"{where}; {', '.join(d['name'] + ' ' + d['version'] for d in present)} is installed on its own")
    dist = dists.get(req.name)
    pin = f"{req.name}{req.specifier}"
    install = f'pip install --force-reinstall --no-deps "{pin}"' if req.specifier else f"pip install {req.name}"
    install_fix = pip_fix(python_info, "install", *(("--force-reinstall", "--no-deps", pin) if req.specifier else (req.name,)))
    if dist is None:
        return _pin_not_installed(torch, pin, present, install, install_fix, python_info)
    details = {"requirement": req.text, "installed": dist["version"], "marker_applies": req.applies}
    matches = satisfies(req.specifier, dist["version"])
    if not matches:
        return fail(
            f"{dist['name']} {dist['version']} is installed but torch {torch['version']} requires {pin}; Inductor imports "
            "Triton internals that move between releases (e.g. \"cannot import name 'triton_key'\")",
            f"{install}   # or reinstall torch to get its matching Triton",
            details=details,
            fixes=[install_fix],
        )
    if triton_pkg is not None and not triton_pkg:
        return fail(
            f"{dist['name']} {dist['version']} is installed according to its dist-info, but the triton package files are gone "
            "(often after uninstalling another Triton distribution that shared them)",
            f'pip install --force-reinstall --no-deps "{dist["name"]}=={dist["version"]}"',
            details=details,
            fixes=[pip_fix(python_info, "install", "--force-reinstall", "--no-deps", f"{dist['name']}=={dist['version']}")],
        )
    files_version = triton_pkg.get("version") if triton_pkg else None
    if files_version and not same_release(files_version, dist["version"]):
        return fail(
            f"triton's files say {files_version} but the {dist['name']} dist-info says {dist['version']}: another package "
            "overwrote the triton/ directory",
            f'pip uninstall -y {" ".join(d["name"] for d in present)} && pip install "{pin}"',
            details={**details, "files_version": files_version},
            fixes=_reinstall(python_info, present, pin),
        )
    return ok(f"{dist['name']} {dist['version']} satisfies torch's pin {pin}", details=details)


@check("triton.single_dist", tags=("build",), sources=("live", "pasted"), blame=("triton", "pytorch-triton"))
def single_dist(dists, python_info=None):
    """Only one distribution provides the triton package"""
    present = installed_tritons(dists)
    if not present:
        return skip("no Triton distribution is installed")
    if len(present) == 1:
        d = present[0]
        return ok(f"{d['name']} {d['version']} is the only Triton distribution")
    names = ", ".join(f"{d['name']} {d['version']}" for d in present)
    req = torch_triton_requirement(dists["torch"]) if "torch" in dists else None
    reinstall = f' && pip install "{req.name}{req.specifier}"' if req else ""
    return fail(
        f"{names} are all installed and all write the same triton/ package; whichever was installed last wins, and "
        "uninstalling one deletes the other's files",
        f"pip uninstall -y {' '.join(d['name'] for d in present)}{reinstall}",
        details={"installed": {d["name"]: d["version"] for d in present}},
        fixes=_reinstall(python_info, present, f"{req.name}{req.specifier}")
        if req
        else [pip_fix(python_info, "uninstall", "-y", *(d["name"] for d in present))],
    )


# ---------------------------------------------------------------- directories Triton writes (A5)


TRITON_SUGGESTION = "/tmp/triton-$(id -u)"


@fact("triton_cache", ask="the value of TRITON_CACHE_DIR and HOME, and who owns that directory")
def triton_cache(env) -> dict:
    """Triton's cache directory resolved as its knobs do: TRITON_CACHE_DIR, else <TRITON_HOME or ~>/.triton/cache."""
    from envdoctor import compile_locations  # on use: a paste has no environment to resolve

    where = compile_locations(env)["triton"]
    if where.path is None:  # no HOME and no passwd entry: os.path.expanduser("~") stays "~"
        return {"path": None, "source": "none", "probe": None}
    p = dirs.probe_dir(where.path)
    return {"path": p.path, "source": where.source, "chosen_by": where.chosen_by(), "probe": p.__dict__}


def only_on_gpu(result, torch_build):
    """A Triton launcher or cache problem stops nothing with a CPU build of torch: torch.compile
    uses Inductor's C++ backend and Triton compiles no GPU kernel (its interpreter needs neither
    the cache nor a C compiler). Reported as a skip that still says what it found."""
    if result.status in (Status.FAIL, Status.WARN) and torch_build and torch_build.get("kind") == "cpu":
        return skip(
            f"torch {torch_build.get('version', '')} is a CPU build, so Triton compiles nothing here; with a CUDA torch: {result.message}"
        )
    return result


@check("triton.cache_dir", tags=("build",))
def cache_dir(triton_cache, triton_pkg, mounts=None, torch_build=None):
    """Triton's cache directory is writable and local"""
    return only_on_gpu(_cache_dir(triton_cache, mounts), torch_build)


def _cache_dir(triton_cache, mounts):
    if triton_cache["path"] is None:
        return fail(
            "HOME is unset and this UID has no passwd entry, so Triton's cache would land in a relative '~/.triton/cache' "
            "under the current directory (older Triton: KeyError: 'HOME')",
            "export TRITON_CACHE_DIR=/tmp/triton-$(id -u)   # or set HOME",
            fixes=directory_fix("TRITON_CACHE_DIR", TRITON_SUGGESTION),
        )
    probe = dirs.DirProbe(**triton_cache["probe"])
    status, message, hint = dirs.judge_cache_dir(
        f"Triton cache ({triton_cache.get('chosen_by') or triton_cache['source']})",
        probe,
        mounts,
        env_var="TRITON_CACHE_DIR",
        suggest=TRITON_SUGGESTION,
        needs_exec=True,
    )
    if status is Status.PASS:
        return ok(message, details={"path": probe.path, "source": triton_cache["source"], "free": probe.free})
    fixes = directory_fix("TRITON_CACHE_DIR", TRITON_SUGGESTION)
    return (fail if status is Status.FAIL else warn)(message, hint, details={"path": probe.path}, fixes=fixes)


# ---------------------------------------------------------------- the C launcher: compiler (A3), libcuda (A1)


@check("triton.c_compiler", tags=("build",))
def c_compiler_check(c_compiler, triton_pkg, torch_build=None, os_release=None):
    """A C compiler for Triton's launcher, chosen as Triton chooses it"""
    return only_on_gpu(_c_compiler(c_compiler, os_release), torch_build)


def _c_compiler(c_compiler, os_release):
    if c_compiler.get("problem"):
        hint = (
            "apt-get install gcc   # or: dnf install gcc"
            if c_compiler["source"] == "PATH"
            else "export CC=/usr/bin/gcc   # CC must name one compiler executable, not a folder or a command line"
        )
        consequence = (
            "Triton fails with 'Failed to find C compiler. Please specify via CC environment variable'"
            if c_compiler["source"] == "PATH"
            else "Triton's launcher build fails (it runs CC as one program, without a shell)"
        )
        fixes = system_package(os_release, apt="gcc", dnf="gcc") if c_compiler["source"] == "PATH" else [env_fix("CC", "/usr/bin/gcc")]
        return fail(f"{c_compiler['problem']}: {consequence}", hint, details=c_compiler, fixes=fixes)
    return ok(f"{c_compiler['path']} ({c_compiler['source']}){': ' + c_compiler['version'] if c_compiler.get('version') else ''}")


# Where NVIDIA drivers put libcuda.so.1, for the hint (WSL keeps it in /usr/lib/wsl/lib).
LIBCUDA_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/nvidia/lib64",
    "/usr/lib/wsl/lib",
)


@check("triton.libcuda", tags=("gpu",))
def libcuda(triton_pkg, env, driver=None, ldconfig=None):
    """libcuda.so.1 is found the way Triton looks for it"""
    result = _libcuda_so1(triton_pkg, env, driver, ldconfig)
    if result.status is not Status.PASS or not links_lcuda(triton_pkg.get("location")):
        return result
    return _unversioned_libcuda(result, env, ldconfig)


def links_lcuda(pkg_dir: str | None) -> bool:
    """Whether this Triton's launcher links ``-lcuda`` (needs the unversioned libcuda.so); Triton
    3.2+ links ``-l:libcuda.so.1`` instead. Read from backends/nvidia/driver.py."""
    if not pkg_dir:
        return False
    try:
        with open(os.path.join(pkg_dir, "backends", "nvidia", "driver.py"), encoding="utf-8", errors="replace") as f:
            text = f.read(256 * 1024)
    except OSError:
        return False
    return re.search(r"""libraries\s*=\s*\[[^\]]*['"]cuda['"]""", text) is not None


def linker_dirs(env: Mapping[str, str]) -> list[str]:
    """Where ``ld`` looks for -lcuda besides Triton's -L dirs: LIBRARY_PATH, the WSL driver
    directory, the compiler's default library directories."""
    dirs = [d for d in (env.get("LIBRARY_PATH") or "").split(":") if d] + ["/usr/lib/wsl/lib"]
    cc = env.get("CC") or "gcc"
    done = run([cc, "-print-search-dirs"], timeout=5.0)
    for line in done.stdout.splitlines() if done.ok else []:
        if line.startswith("libraries: ="):
            dirs += [os.path.normpath(d) for d in line.partition("=")[2].split(":") if d]
    return list(dict.fromkeys(dirs))


def _unversioned_libcuda(found, env: Mapping[str, str], ldconfig):
    """Triton's launcher build runs ``cc ... -lcuda -L<dirs of libcuda.so.1>``; with only
    libcuda.so.1 there (WSL, some images) it stops: "/usr/bin/ld: cannot find -lcuda"."""
    so1_dirs = []
    if env.get("TRITON_LIBCUDA_PATH"):
        so1_dirs.append(env["TRITON_LIBCUDA_PATH"])
    so1_dirs += [os.path.dirname(p) for p in ((ldconfig or {}).get("libs") or {}).get("libcuda.so.1") or []]
    so1_dirs += [d for d in (env.get("LD_LIBRARY_PATH") or "").split(":") if d and os.path.isfile(os.path.join(d, "libcuda.so.1"))]
    cached = ((ldconfig or {}).get("libs") or {}).get("libcuda.so") or []
    for d in dict.fromkeys(so1_dirs + [os.path.dirname(p) for p in cached] + linker_dirs(env)):
        if os.path.exists(os.path.join(d, "libcuda.so")):
            return ok(f"{found.message}; libcuda.so for the launcher's -lcuda: {os.path.join(d, 'libcuda.so')}", details=found.details)
    where = so1_dirs[0] if so1_dirs else _libcuda_dir_guess()
    return fail(
        f"only libcuda.so.1 is installed ({where}), no unversioned libcuda.so: this Triton's launcher links with -lcuda "
        "and fails with '/usr/bin/ld: cannot find -lcuda: No such file or directory' (common on WSL and some images)",
        f"sudo ln -s libcuda.so.1 {where}/libcuda.so && sudo ldconfig   # or: export TRITON_LIBCUDA_PATH=<a directory holding libcuda.so>",
        details={"searched": so1_dirs},
    )


def _libcuda_so1(triton_pkg, env, driver, ldconfig):
    if not driver:
        return skip("no NVIDIA driver, so Triton's CUDA backend is not used")
    if not triton_pkg.get("nvidia_backend"):
        return skip("this Triton has no NVIDIA backend")
    # triton/backends/nvidia/driver.py libcuda_dirs(): TRITON_LIBCUDA_PATH (a directory), else
    # `/sbin/ldconfig -p`, else LD_LIBRARY_PATH; otherwise "AssertionError: libcuda.so cannot found!"
    if env.get("TRITON_LIBCUDA_PATH"):
        d = env["TRITON_LIBCUDA_PATH"]
        if os.path.isfile(os.path.join(d, "libcuda.so.1")):
            return ok(f"TRITON_LIBCUDA_PATH={d} contains libcuda.so.1")
        what = "a file; Triton expects the directory that contains libcuda.so.1" if os.path.isfile(d) else "without libcuda.so.1"
        return fail(
            f"TRITON_LIBCUDA_PATH={d} is {what}: Triton stops with 'libcuda.so cannot found!'",
            f"export TRITON_LIBCUDA_PATH={_libcuda_dir_guess(d)}",
            fixes=[env_fix("TRITON_LIBCUDA_PATH", _libcuda_dir_guess(d))],
        )
    guess = _libcuda_dir_guess()
    if not ldconfig:
        return fail(
            f"Triton runs /sbin/ldconfig to find libcuda.so.1 and it is missing here ({getattr(ldconfig, 'reason', 'not found')}): "
            "\"FileNotFoundError: ... 'ldconfig'\"",
            f"export TRITON_LIBCUDA_PATH={guess}",
            fixes=[env_fix("TRITON_LIBCUDA_PATH", guess)],
        )
    found = ldconfig.get("libs", {}).get("libcuda.so.1") or []
    if found:
        if not os.path.exists("/sbin/ldconfig"):
            return fail(
                f"libcuda.so.1 is in the linker cache but Triton runs /sbin/ldconfig, which does not exist (ldconfig is at {ldconfig.get('path')})",
                f"export TRITON_LIBCUDA_PATH={os.path.dirname(found[0])}",
                fixes=[env_fix("TRITON_LIBCUDA_PATH", os.path.dirname(found[0]))],
            )
        return ok(f"libcuda.so.1 in the linker cache: {found[0]}", details={"paths": found})
    for d in (env.get("LD_LIBRARY_PATH") or "").split(":"):
        if d and os.path.isfile(os.path.join(d, "libcuda.so.1")):
            return ok(f"libcuda.so.1 found through LD_LIBRARY_PATH in {d} (not in the linker cache; Triton falls back to this)")
    return fail(
        "libcuda.so.1 is not in the linker cache (`ldconfig -p`) nor on LD_LIBRARY_PATH: Triton stops with "
        "'libcuda.so cannot found!' (typical in containers whose ld cache predates the injected driver)",
        f"ldconfig   # as root, e.g. in the container entrypoint; or: export TRITON_LIBCUDA_PATH={guess}",
        fixes=[Fix(("ldconfig",), scope="system", needs_root=True), env_fix("TRITON_LIBCUDA_PATH", guess)],
    )


def _libcuda_dir_guess(hint_path: str = "") -> str:
    if hint_path and os.path.isfile(hint_path) and os.path.basename(hint_path).startswith("libcuda.so"):
        return os.path.dirname(hint_path)
    for d in LIBCUDA_DIRS:
        if os.path.isfile(os.path.join(d, "libcuda.so.1")):
            return d
    return "<directory containing libcuda.so.1>"


# ---------------------------------------------------------------- ptxas (A4)

PTXAS_TOOLS = ("ptxas", "ptxas-blackwell")


def tool_env_var(tool: str) -> str:
    # triton/knobs.py env_nvidia_tool: "ptxas-blackwell" -> TRITON_PTXAS_BLACKWELL_PATH
    return f"TRITON_{tool.upper().replace('-', '_')}_PATH"


def tool_version(path: str) -> tuple[str | None, str]:
    """(release, problem) from ``<path> --version``."""
    done = run([path, "--version"], timeout=15)
    if not done.ok:
        return None, done.describe()
    release = parse_release(done.stdout + done.stderr)
    return release, "" if release else f"{path} --version printed no 'release X.Y'"


def executable_problem(path: str) -> str:
    if not os.path.exists(path):
        return "does not exist"
    if os.path.isdir(path):
        return "is a directory; current Triton expects the ptxas binary itself (only Triton <= 2.0 took a CUDA prefix)"
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode) or not os.access(path, os.X_OK):
        return "is not an executable file"
    return ""


@fact("triton_ptxas")
def triton_ptxas(triton_pkg, env) -> dict:
    """The ptxas binaries Triton would use, their CUDA releases, and problems with TRITON_*PTXAS*_PATH."""
    tools: dict[str, dict] = {}
    for tool in PTXAS_TOOLS:
        bundled = triton_pkg["bundled"].get(tool)
        var = tool_env_var(tool)
        entry: dict = {"bundled": bundled, "env_var": var, "env_value": env.get(var), "env_problem": ""}
        candidates = []
        if env.get(var):
            entry["env_problem"] = executable_problem(env[var])
            if not entry["env_problem"]:
                candidates.append(env[var])
        if bundled:
            candidates.append(bundled)
        entry["path"], entry["version"], entry["problem"] = None, None, ""
        # Triton tries the variable's path first and silently falls back to the bundled binary.
        for path in candidates:
            version, problem = tool_version(path)
            if version:
                entry["path"], entry["version"] = path, version
                if path == env.get(var):
                    entry["env_version"] = version
                break
            if path == env.get(var):
                entry["env_problem"] = problem
            else:
                entry["problem"] = problem
        if bundled or env.get(var):
            tools[tool] = entry
    others = {
        k: v for k, v in env.items() if re.fullmatch(r"TRITON_\w*PTXAS\w*_PATH", k) and k not in {tool_env_var(t) for t in PTXAS_TOOLS}
    }
    other_problems = {k: executable_problem(v) for k, v in others.items() if executable_problem(v)}
    return {"tools": tools, "other_env_problems": other_problems}


def tool_for_arch(tools: Mapping[str, dict], cc: tuple[int, int]) -> dict | None:
    # triton/backends/nvidia/compiler.py get_ptxas(): ptxas-blackwell for arch >= 100 where it exists.
    if cc[0] >= 10 and "ptxas-blackwell" in tools:
        return tools["ptxas-blackwell"]
    return tools.get("ptxas")


def _gpu_list(visible_gpus, gpus) -> list[dict] | None:
    """The GPUs CUDA will use: ``visible_gpus`` when known (may be empty), else all of ``gpus``, else None."""
    if isinstance(visible_gpus, list):
        return visible_gpus
    if isinstance(gpus, list):
        return gpus
    return None


def _ptxas_tool_items(triton_ptxas: Mapping) -> list[Item]:
    """A TRITON_*PTXAS*_PATH that does not run, and a bundled tool that is missing."""
    items: list[Item] = []
    for tool, e in triton_ptxas["tools"].items():
        if e["env_problem"]:
            fallback = (
                f"Triton silently falls back to its bundled {tool} {e['version']}" if e["version"] else "and there is no usable fallback"
            )
            items.append(Item(e["env_var"], Status.WARN, f"{e['env_var']}={e['env_value']} {e['env_problem']}; {fallback}"))
        if not e["path"] and (e["bundled"] or tool == "ptxas"):
            items.append(
                Item(tool, Status.FAIL, f"Triton's {tool} cannot run ({e['problem'] or 'not bundled'}): Triton raises 'Cannot find {tool}'")
            )
    for var, problem in triton_ptxas["other_env_problems"].items():
        items.append(Item(var, Status.WARN, f"{var} {problem}"))
    return items


def _ptxas_too_new_for_triton(tools: Mapping[str, dict], triton_ver: str) -> list[Item]:
    old_triton = (triton_mm := major_minor(triton_ver)) is not None and triton_mm <= (3, 4)
    items = []
    for tool, e in tools.items():
        mm = major_minor(e["version"] or "")
        if mm and mm[0] >= 13 and old_triton:
            items.append(
                Item(
                    tool,
                    Status.FAIL,
                    f"{tool} {e['version']} ({e['path']}) is CUDA 13+, which Triton {triton_ver} does not know: "
                    f"'RuntimeError: Triton only support CUDA 10.0 or higher, but got CUDA version: {e['version']}'",
                )
            )
    return items


def _ptxas_gpu_item(g: Mapping, tools: Mapping[str, dict], driver, driver_mm) -> Item | None:
    """Whether the ptxas Triton picks for this GPU knows its architecture and suits the driver."""
    cc = parse_cc(g.get("cc", ""))
    e = tool_for_arch(tools, cc) if cc else None
    if not cc or not e or not e["version"]:
        return None
    mm = major_minor(e["version"])
    if mm is None:  # a version that is no number: nothing to compare (it raised TypeError below)
        return None
    need = PTXAS_MIN_FOR_ARCH.get(cc)
    label = f"GPU {g.get('index')} ({g.get('name')}, sm_{cc[0]}{cc[1]})"
    if need and mm < need:
        return Item(
            label,
            Status.FAIL,
            f"{tool_label(e)} {e['version']} predates sm_{cc[0]}{cc[1]} (needs CUDA >= {need[0]}.{need[1]}): "
            f"\"ptxas fatal : Value 'sm_{cc[0]}{cc[1]}a' is not defined for option 'gpu-name'\"",
        )
    if driver_mm and mm[0] > driver_mm[0]:
        return Item(
            label,
            Status.FAIL,
            f"{tool_label(e)} {e['version']} is newer than the driver's CUDA {driver['cuda_version']}: kernels it builds "
            "fail to load (CUDA_ERROR_INVALID_IMAGE)",
        )
    return Item(label, Status.PASS, f"{tool_label(e)} {e['version']}")


@check("triton.ptxas", tags=("build",))
def ptxas(triton_pkg, triton_ptxas, torch_build=None, driver=None, visible_gpus=None, gpus=None):
    """Triton's ptxas runs and knows the GPU's architecture and the driver's CUDA"""
    if torch_build and torch_build.get("kind") in ("rocm", "xpu"):
        return skip(f"torch is a {torch_build['kind']} build; Triton's NVIDIA assembler is not used")
    if not triton_pkg.get("nvidia_backend"):
        return skip("this Triton has no NVIDIA backend")
    tools = triton_ptxas["tools"]
    triton_ver = triton_pkg.get("version") or ""
    items = _ptxas_tool_items(triton_ptxas) + _ptxas_too_new_for_triton(tools, triton_ver)
    gpu_list = _gpu_list(visible_gpus, gpus)
    driver_mm = major_minor(driver.get("cuda_version") or "") if driver else None
    for g in gpu_list or []:
        item = _ptxas_gpu_item(g, tools, driver, driver_mm)
        if item is not None:
            items.append(item)
    status = worst(items)
    versions = ", ".join(f"{t} {e['version']}" for t, e in tools.items() if e["version"]) or "no ptxas"
    details = {t: {"path": e["path"], "version": e["version"]} for t, e in tools.items()}
    if status is Status.PASS:
        tail = "" if gpu_list else " (no NVIDIA GPU to compare with)"
        if driver_mm:
            tail += f"; driver CUDA {driver['cuda_version']}"
        return ok(f"Triton {triton_ver}: {versions}{tail}", details=details, items=items)
    bad = [i for i in items if i.status is status]
    hint = _ptxas_hint(bad, driver)
    return (fail if status is Status.FAIL else warn)(
        bad[0].message + (f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""), hint, details=details, items=items
    )


def tool_label(e: Mapping) -> str:
    return f"{e['env_var']} ptxas" if e["path"] and e["path"] == e.get("env_value") else "Triton's ptxas"


def _ptxas_hint(bad: Sequence[Item], driver) -> str:
    text = " ".join(i.message for i in bad)
    if "newer than the driver" in text:
        return "upgrade the NVIDIA driver to a branch for that CUDA major, or point TRITON_PTXAS_PATH at a ptxas of the driver's CUDA major"
    if "predates" in text:
        return "pip install -U torch (a newer torch pins a Triton whose ptxas knows this GPU), or export TRITON_PTXAS_PATH=/usr/local/cuda-13.0/bin/ptxas"
    if "Cannot find" in text:
        return "pip install --force-reinstall --no-deps triton==<the version torch pins>   # restores the bundled ptxas"
    if "CUDA 13+" in text:
        return "unset TRITON_PTXAS_PATH, or upgrade torch and Triton together (Triton >= 3.5 knows CUDA 13)"
    return "unset the variable, or point it at an executable ptxas file (e.g. /usr/local/cuda/bin/ptxas)"


# ---------------------------------------------------------------- GPU generation (A8)


@check("triton.gpu_supported", tags=("gpu",), sources=("live", "pasted"))
def gpu_supported(triton_pkg=None, torch_build=None, visible_gpus=None, gpus=None, dists=None):
    """The GPUs are new enough for Triton (torch.compile's GPU backend)"""
    if torch_build and torch_build.get("kind") not in ("cuda", None):
        return skip(f"torch is a {torch_build['kind']} build; NVIDIA compute capability does not apply")
    # the version alone when the build is not known (``torch 1.2.0`` written by hand)
    version = str((torch_build or {}).get("version") or ((dists or {}).get("torch") or {}).get("version") or "")
    if (torch_mm := major_minor(version)) and torch_mm < (2, 0):
        return skip(f"torch {version} predates torch.compile (2.0), Triton's user here")
    gpu_list = _gpu_list(visible_gpus, gpus)
    if gpu_list is None:
        return skip(f"no NVIDIA GPU ({getattr(gpus, 'reason', '') or 'none found'})")
    if not gpu_list:
        return skip("no NVIDIA GPU is visible to CUDA (CUDA_VISIBLE_DEVICES)")
    triton_ver = (triton_pkg.get("version") if triton_pkg else None) or ""
    fma_only = (triton_mm := major_minor(triton_ver)) is None or triton_mm >= (3, 3)
    items = []
    for g in gpu_list:
        cc = parse_cc(g.get("cc", ""))
        label = f"GPU {g.get('index')} ({g.get('name')}, CC {g.get('cc')})"
        if cc is None:
            continue
        if cc < (7, 0):
            # torch/utils/_triton.py has_triton(): CUDA capability >= 7.0; else GPUTooOldForTriton.
            items.append(
                Item(label, Status.FAIL, "below 7.0: torch.compile refuses it ('Triton only supports devices of CUDA Capability >= 7.0')")
            )
        elif cc < (8, 0) and fma_only:
            items.append(
                Item(
                    label,
                    Status.WARN,
                    f"Volta/Turing: Triton {triton_ver or '>= 3.3'} dropped their tensor-core paths; matmuls fall back to slow FMA code "
                    "and some kernels fail ('PassManager::run failed')",
                )
            )
        else:
            items.append(Item(label, Status.PASS, "supported"))
    status = worst(items)
    if status is Status.PASS:
        return ok(", ".join(i.name for i in items) + ": supported by Triton (needs CC >= 7.0; 8.0+ officially)", items=items)
    bad = [i for i in items if i.status is status]
    msg = f"{bad[0].name}: {bad[0].message}" + (f" (+{len(bad) - 1} more)" if len(bad) > 1 else "")
    if status is Status.FAIL:
        return fail(msg, 'torch.compile(model, backend="aot_eager")  # no Triton; or use a GPU with CC >= 7.0', items=items)
    return warn(
        msg, 'pip install "torch==2.6.*"  # Triton 3.2 keeps Volta/Turing tensor cores; or use an Ampere (8.0) or newer GPU', items=items
    )
