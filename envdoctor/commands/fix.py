"""``envdoctor fix``: the fixes the failing rows carry, as a plan; applied only when asked,
journaled before anything changes, proved by a re-check, and undone by ``--undo``.

What runs: ``venv`` fixes (pip, compileall in the examined environment). ``system`` and root
fixes only with ``--allow-system``; a driver install or a reboot never (printed only).
``environment`` fixes (``export VAR=...``) cannot change the parent shell: they are written to a
file in the state directory for the user to source (journaled like any other file), and the
re-check runs with them set, as a shell that sourced it would.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shlex
import sys
from typing import TYPE_CHECKING, Any

import click

from envdoctor.commands import check as check_command
from envdoctor.core import journal as jr
from envdoctor.core.api import Fix, Status
from envdoctor.core.exitcode import ExitCode
from envdoctor.core.subproc import run as run_command

if TYPE_CHECKING:
    from envdoctor.core.scrub import Scrubber

# The check options that choose what runs and what it is judged against; output options are
# the fix command's own.
_CHECK_OPTIONS = (
    "select",
    "deselect",
    "profile",
    "timeout",
    "checks_path",
    "expects",
    "config_file",
    "python",
    "baseline",
    "lock",
    "no_plugins",
)
FIX_TIMEOUT = 3600.0  # one command (pip may download a 2 GB wheel)
# Journal entries whose changes are (still) in the environment; "running": the doctor died half-way.
_UNDOABLE = ("done", "running", "rollback incomplete", "undo incomplete")
_REPAIRABLE = (Status.FAIL, Status.ERROR, Status.WARN)
_NEVER_PROGRAMS = {"reboot", "shutdown", "poweroff", "halt", "kexec", "nvidia-installer", "ubuntu-drivers", "dkms"}
_DRIVER_PACKAGE = re.compile(
    r"^(nvidia-driver|nvidia-open|cuda-drivers|nvidia-dkms|kmod-nvidia|akmod-nvidia|nvidia-kernel)|NVIDIA-Linux-.*\.run$"
)
_EXPORT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PIP_SOURCE_OPTIONS = {"--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--trusted-host"}


def _check_params() -> list[click.Parameter]:
    return [p for p in check_command.check_cmd.params if p.name in _CHECK_OPTIONS]


_SCRUBBER: list[Scrubber] = []  # the one scrubber, made on first use


def _shown(text: str) -> str:
    """Text from a report or a command as it may be shown: secrets hidden (an index URL's
    password), control characters escaped (inert on a terminal)."""
    if not _SCRUBBER:
        from envdoctor.core.scrub import scrubber

        _SCRUBBER.append(scrubber())
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in _SCRUBBER[0].text(text))


@dataclasses.dataclass
class Step:
    """One failing row and what is done with each of its fixes: ``runs`` or why not."""

    check: str
    status: Status
    message: str
    fixes: list[tuple[Fix, str]]  # (fix, "" when it runs, else why it does not)

    @property
    def runnable(self) -> list[Fix]:
        return [f for f, why in self.fixes if not why]


def never_runs(fix: Fix) -> bool:
    """A driver install or a reboot: printed, never run."""
    argv = [a for a in fix.argv if a not in ("sudo", "env", "-E")]
    program = os.path.basename(argv[0]) if argv else ""
    if program in _NEVER_PROGRAMS or (program == "systemctl" and {"reboot", "poweroff", "kexec"} & set(argv)):
        return True
    return program in ("modprobe", "rmmod") and any(a.startswith("nvidia") for a in argv) or any(_DRIVER_PACKAGE.search(a) for a in argv)


def exported(fix: Fix) -> tuple[str, str] | None:
    """(NAME, VALUE) of an ``export NAME=VALUE`` environment fix; None for any other fix."""
    if fix.scope == "environment" and len(fix.argv) == 2 and fix.argv[0] == "export" and _EXPORT.match(fix.argv[1]):
        name, _, value = fix.argv[1].partition("=")
        return name, value
    return None


def why_not(fix: Fix, allow_system: bool, python: str) -> str:
    """Empty when ``fix`` runs under these options, else why it is only printed. A ``venv`` fix
    is one the examined interpreter runs (pip, compileall); any other program is the system's."""
    if never_runs(fix):
        return "a driver install or a reboot: printed only, never run by envdoctor"
    if fix.scope == "environment":
        return "" if exported(fix) else "a fix cannot change your shell: eval the line yourself"
    foreign = fix.scope == "venv" and fix.argv[0] not in (python, "python", "python3")
    if foreign and not allow_system:
        return f"not run by {python}: runs only with --allow-system"
    if fix.scope == "system" or fix.needs_root:
        if not allow_system:
            return "runs only with --allow-system"
        if fix.needs_root and os.geteuid() != 0:
            return "needs root: run it as root yourself"
    return ""


def make_steps(report, allow_system: bool, python: str) -> list[Step]:
    return [
        Step(r.id, r.status, r.message, [(f, why_not(f, allow_system, python)) for f in r.fixes])
        for r in report.results
        if r.status in _REPAIRABLE and r.fixes
    ]


def show_plan(steps: list[Step], python: str, prefix: str) -> None:
    if not steps:
        click.echo("Nothing to fix: no failing check carries a fix.")
        return
    click.echo(f"Plan for {_shown(prefix)} ({_shown(python)}):")
    for s in steps:
        click.echo(f"\n  [{s.status.value.upper()}] {_shown(s.check)}: {_shown(s.message)}")
        for f, why in s.fixes:
            root = ", needs root" if f.needs_root else ""
            click.echo(f"      $ {_shown(f.command)}")
            click.echo(f"        ({f.scope}{root}; {why or _runs(f, python, prefix)})")
    lines = [f for s in steps for f, _ in s.fixes if f.scope == "environment" and not never_runs(f)]
    for title, group in (
        (f"it writes them to {jr.env_file(prefix)} for you to source", [f for f in lines if exported(f)]),
        ("eval them there yourself", [f for f in lines if not exported(f)]),
    ):
        if group:
            click.echo(f"\nEnvironment lines (envdoctor cannot set them in your shell; {_shown(title)}):")
            for f in group:
                click.echo(f"  {_shown(f.command)}")


def _runs(fix: Fix, python: str, prefix: str) -> str:
    if exported(fix):
        return f"runs: written to {_shown(jr.env_file(prefix))} for you to source"
    return "runs" if resolve_argv(fix, python)[0] == python else "runs; --undo cannot revert it"


def pip_sources(argv: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The index options of a pip command ((--no-index,), (--find-links, DIR), ...), for undoing it from the same place."""
    out: list[tuple[str, ...]] = []
    for i, a in enumerate(argv):
        if a == "--no-index":
            out.append((a,))
        elif a.split("=", 1)[0] in _PIP_SOURCE_OPTIONS:
            out.append((a,) if "=" in a else (a, *argv[i + 1 : i + 2]))
    return out


def resolve_argv(fix: Fix, python: str) -> tuple[str, ...]:
    """A venv fix run by the examined interpreter: bare ``python`` becomes its path."""
    return (python, *fix.argv[1:]) if fix.argv[0] in ("python", "python3") else fix.argv


def pip_dry_run(argv: tuple[str, ...]) -> dict[str, str] | None:
    """{name: version} that ``pip install ...`` would install (``--dry-run --report -``); None
    when this pip cannot say or this is not a pip install."""
    import json

    if argv[1:4] != ("-m", "pip", "install"):
        return None
    done = run_command([*argv, "--dry-run", "--quiet", "--report", "-"], timeout=FIX_TIMEOUT)
    try:
        data = json.loads(done.stdout) if done.ok else None
        return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in data["install"]} if data else None
    except (ValueError, KeyError, TypeError):
        return None


def watched_dirs(argv: tuple[str, ...]) -> list[str]:
    """Directories whose files a fix writes (compileall: the tree it compiles)."""
    if argv[1:3] == ("-m", "compileall"):
        return [a for a in argv[3:] if not a.startswith("-") and os.path.isdir(a)]
    return []


def _entry(step: Step, python: str, journal: jr.Journal) -> dict[str, Any]:
    """What a step will change, before it changes anything: its commands, the distributions, the
    files it may write (compileall's tree, the environment lines' file), backed up where replaced."""
    argvs = [resolve_argv(f, python) for f in step.runnable if not exported(f)]
    exports = [f.argv[1] for f in step.runnable if exported(f)]
    env_file = [jr.env_file(journal.prefix)] if exports else []
    dirs = sorted({d for a in argvs for d in watched_dirs(a)}) + env_file
    entry: dict[str, Any] = {
        "check": step.check,
        "commands": [list(a) for a in argvs],
        "exports": exports,
        "env_file": env_file[0] if env_file else None,
        "system": [list(a) for a in argvs if a[0] != python],  # not the journal's to revert
        "pip_sources": [o for group in dict.fromkeys(g for a in argvs for g in pip_sources(a)) for o in group],
        "planned": [pip_dry_run(a) for a in argvs],
        "before": jr.distribution_versions(python),
        "dirs": dirs,
        "files_before": jr.file_states(dirs),
        "state": "running",
    }
    # compileall rewrites stale bytecode in place; the environment lines' file may be an earlier run's
    stale = [p for p in entry["files_before"] if p in env_file or (f"{os.sep}__pycache__{os.sep}" in p and p[-1] != os.sep)]
    entry["replaced"] = journal.backup(stale)
    return entry


def apply_step(step: Step, python: str, journal: jr.Journal, run: dict) -> str:
    """Run the step's fixes in order, journaled first; a failure rolls the step back. Returns
    "" when every command succeeded, else why not (rolled back)."""
    entry = _entry(step, python, journal)
    run["entries"].append(entry)
    journal.save()  # recorded before anything changes
    try:
        for argv in entry["commands"]:
            click.echo(f"  running: {_shown(shlex.join(argv))}")
            done = run_command(argv, timeout=FIX_TIMEOUT)
            if not done.ok:
                raise _StepFailed(_shown(done.describe()))
        if entry["exports"]:
            click.echo(f"  writing: {_shown(' '.join(entry['exports']))} to {_shown(entry['env_file'])}")
            write_exports(entry["env_file"], entry["exports"], journal.prefix)
    except (_StepFailed, KeyboardInterrupt) as e:
        problems = restore_entry(entry, python)
        entry["state"] = "rolled back" if not problems else "rollback incomplete"
        journal.save()
        if isinstance(e, KeyboardInterrupt):
            raise
        return f"{e}; rolled back" + (f" (incompletely: {'; '.join(problems)})" if problems else "")
    entry["after"] = jr.distribution_versions(python)
    click.echo(changes(entry["before"], entry["after"]))
    entry["files_created"], _ = jr.diff_files(entry["files_before"], jr.file_states(entry["dirs"]))
    entry["state"] = "done"
    journal.save()
    os.environ.update(line.split("=", 1) for line in entry["exports"])  # the re-check runs as a shell that sourced them
    return ""


def write_exports(path: str, lines: list[str], prefix: str) -> None:
    """Add ``export NAME=VALUE`` lines to the file the user sources (a NAME it sets already is
    replaced); _StepFailed when it cannot be written."""
    names = {line.split("=", 1)[0] for line in lines}
    try:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                old = f.read(1 << 20).splitlines()
        except FileNotFoundError:
            old = [f"# envdoctor fix: environment lines for {_shown(prefix)}; load them in your shell with: . {shlex.quote(path)}"]
        kept = [x for x in old if not (x.startswith("export ") and x[7:].split("=", 1)[0] in names)]
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write("\n".join([*kept, *(shlex.join(("export", line)) for line in lines)]) + "\n")
        os.replace(path + ".tmp", path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(path + ".tmp")
        raise _StepFailed(f"cannot write {_shown(path)}: {e.strerror or e}") from None


def changes(before: dict, after: dict) -> str:
    """One line: the distributions that changed ("tinypkg 1 -> 2, tinydep (none) -> 1")."""
    old, new = jr.diff_versions(before, after)
    listed = ", ".join(f"{n} {old[n] or '(none)'} -> {new[n] or '(none)'}" for n in old)
    return f"  distributions: {_shown(listed) or 'none changed'}"


class _StepFailed(Exception):
    pass


def restore_entry(entry: dict, python: str) -> list[str]:
    """Put back the distributions and files one journal entry recorded; the problems left."""
    before = entry["before"]
    now = jr.distribution_versions(python)
    old, _ = jr.diff_versions(before, entry.get("after") or now)
    added = [n for n, v in old.items() if v is None and n in now]
    wanted = [f"{n}=={v}" for n, v in old.items() if v is not None and now.get(n) != v]
    problems = []
    for argv in (
        [python, "-m", "pip", "uninstall", "-y", *added] if added else None,
        [python, "-m", "pip", "install", "--no-deps", *entry.get("pip_sources", ()), *wanted] if wanted else None,
    ):
        if argv:
            click.echo(f"  restoring: {_shown(shlex.join(argv))}")
            done = run_command(argv, timeout=FIX_TIMEOUT)
            if not done.ok:
                problems.append(_shown(done.describe()))
    problems += _restore_files(entry)
    after = jr.distribution_versions(python)
    click.echo(changes(now, after))
    problems += [f"{n} is {after.get(n) or 'absent'}, was {v or 'absent'}" for n, v in old.items() if after.get(n) != v]
    return problems


def _restore_files(entry: dict) -> list[str]:
    import shutil

    problems = []
    before = entry.get("files_before") or {}
    now = jr.file_states(entry.get("dirs") or [])
    created = entry.get("files_created") or [p for p in now if p not in before]
    for path in sorted(created, reverse=True):  # a directory's files before the directory
        try:
            os.rmdir(path) if path[-1] == os.sep else os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as e:
            problems.append(f"cannot remove {path}: {e.strerror}")
    for path, copy in (entry.get("replaced") or {}).items():
        if list(now.get(path) or ()) != list(before.get(path) or ()):
            try:
                shutil.copy2(copy, path)
            except OSError as e:
                problems.append(f"cannot restore {path}: {e.strerror}")
    return problems


def _examined(plan) -> tuple[str, str]:
    """(executable, sys.prefix) of the environment the fixes are for."""
    from envdoctor.core.interpreter import own

    interp = plan.interpreter or own()
    return interp.executable, interp.prefix


def _check_run(plan, ids=None):
    """The checks of ``plan`` (only ``ids`` when given), run now: after pip changed the
    environment, --python's interpreter is examined again."""
    import importlib

    from envdoctor.core.plan import examine_python

    if ids is not None:
        importlib.invalidate_caches()
        interp = examine_python(plan.interpreter.executable) if plan.interpreter else None
        plan = dataclasses.replace(plan, specs=tuple(s for s in plan.specs if s.id in ids), interpreter=interp)
    report = check_command.run(plan)
    return report if ids is None else dataclasses.replace(report, results=tuple(r for r in report.results if r.id in ids))


def _report_from(path: str, plan):
    """A JSON report read back; ("", report) when it was made here for this interpreter, else why its fixes do not run."""
    import socket

    from envdoctor.core.report import ReportError, load_report
    from envdoctor.reporters.json import from_dict

    try:
        report = from_dict(load_report(path))
    except ReportError as e:
        raise click.UsageError(str(e)) from None
    except (KeyError, ValueError, TypeError) as e:
        raise click.UsageError(f"{path}: is not an envdoctor report ({type(e).__name__}: {e})") from None
    python, _ = _examined(plan)
    made = (report.platform.get("hostname"), report.platform.get("executable"))
    if made != (socket.gethostname(), python):
        return f"{path} was made for {_shown(str(made[1]))} on {_shown(str(made[0]))}, not this environment: plan only", report
    return "", report


def _recheck(plan, steps: list[Step], done: dict[str, str]) -> ExitCode:
    """Run the checks whose fixes ran again; 0 when every one passes now."""
    ids = {s.check for s in steps if done.get(s.check) == ""}
    report = _check_run(plan, ids) if ids else None
    rows = {r.id: r for r in report.results} if report else {}
    click.echo("\nRe-check:")
    fixed = True
    for s in steps:
        row, why = rows.get(s.check), done.get(s.check)
        if row is not None and row.status is Status.PASS:
            click.echo(f"  fixed        {s.check}: {_shown(row.message)}")
            continue
        fixed = False
        if row is not None:
            click.echo(f"  still {row.status.value:<6} {s.check}: {_shown(row.message)} (its fix ran; the check still does not pass)")
        elif why:
            click.echo(f"  not fixed    {s.check}: {why}")
        else:
            click.echo(f"  not applied  {s.check}: nothing of its fix may run here (see the plan)")
    if report is not None and report.interrupted:
        return ExitCode.INTERRUPTED
    return ExitCode.OK if fixed else ExitCode.FAILED


def _apply(plan, steps: list[Step], command: str) -> ExitCode:
    python, prefix = _examined(plan)
    done: dict[str, str] = {}
    journal = jr.load(prefix)
    run: dict[str, Any] = {"started": _now(), "command": command, "entries": []}
    journal.runs.append(run)
    click.echo("\nApplying:")
    try:
        for s in steps:
            if s.runnable:
                done[s.check] = apply_step(s, python, journal, run)
                click.echo(f"  {s.check}: {done[s.check] or 'commands succeeded'}")
    finally:  # also on Ctrl-C, after the step rolled back
        if not any(e["state"] in _UNDOABLE for e in run["entries"]):
            journal.forget(run)  # nothing of it is left to undo (every step rolled back)
        journal.save()
    for path in sorted({e["env_file"] for e in run["entries"] if e.get("exports") and e["state"] == "done"}):
        click.echo(f"\nIn your shell: source {_shown(shlex.quote(path))}   (the re-check runs with its lines set, as there)")
    return _recheck(plan, steps, done)


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _undo(plan) -> ExitCode:
    """Undo the last fix run in this environment, newest entry first, then re-check its rows."""
    python, prefix = _examined(plan)
    journal = jr.load(prefix)
    if not journal.runs:
        click.echo(f"envdoctor: nothing to undo: no fix run is journaled for {_shown(prefix)}", err=True)
        return ExitCode.USAGE
    run = journal.runs[-1]
    click.echo(f"Undoing the fix run of {run.get('started')} in {_shown(prefix)}:")
    problems = []
    for entry in reversed(run["entries"]):
        if entry.get("state") in _UNDOABLE:
            found = restore_entry(entry, python)
            problems += [f"{entry['check']}: {p}" for p in found]
            entry["state"] = "undone" if not found else "undo incomplete"
    if problems:
        journal.save()
        for p in problems:
            click.echo(f"envdoctor: could not restore {p}", err=True)
        return ExitCode.FAILED
    journal.forget(run)
    journal.save()
    click.echo("Restored: the distributions and files are as they were before that run.")
    for e in run["entries"]:
        if e.get("exports"):
            names = " ".join(x.split("=", 1)[0] for x in e["exports"])
            click.echo(
                f"Environment lines undone in {_shown(e['env_file'])}; a shell that sourced it keeps them: unset {_shown(names)} there"
            )
    system = [shlex.join(a) for e in run["entries"] for a in e.get("system") or ()]
    for command in system:
        click.echo(f"Not undone (a system command; revert it yourself): {_shown(command)}")
    report = _check_run(plan, {e["check"] for e in run["entries"]})
    click.echo("\nRe-check:")
    for r in report.results:
        click.echo(f"  {r.status.value:<6} {r.id}: {_shown(r.message)}")
    return ExitCode.FAILED if system else ExitCode.OK


def _confirmed(yes: bool, steps: list[Step]) -> bool:
    count = sum(len(s.runnable) for s in steps)
    if not count:
        click.echo("\nNothing to run here: every command above is printed only.") if steps else None
        return False
    if yes:
        return True
    if _on_tty():
        return click.confirm(f"\nRun these {count} command(s)?", default=False)
    click.echo(f"\nNothing changed: not a terminal. Run `envdoctor fix --yes` to run the {count} command(s) marked 'runs'.")
    return False


def _on_tty() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _options_for_plan(options: dict) -> dict:
    """check's options: the fix command's values, every other one at its default."""
    out = dict(check_command.check_cmd.make_context("check", [], resilient_parsing=True).params)
    out.update({k: v for k, v in options.items() if k in _CHECK_OPTIONS})
    return out


@click.command("fix", params=_check_params())
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False),
    metavar="REPORT",
    help="Plan from this JSON report instead of running the checks.",
)
@click.option("-y", "--yes", is_flag=True, help="Run the plan without asking (needed when not on a terminal).")
@click.option(
    "--allow-system", is_flag=True, help="Also run system-scope and root fixes (apt/dnf, /etc, kernel modules); never a driver or a reboot."
)
@click.option("--undo", is_flag=True, help="Put back what the last fix run in this environment changed, then re-check.")
def fix_cmd(from_file, yes, allow_system, undo, **options) -> None:
    """Plan the fixes of the failing checks; run them (--yes), re-check, journal; --undo."""

    if undo and from_file:
        raise click.UsageError("--undo puts back the journal of this environment; it takes no --from report")
    plan = check_command.make_plan(**_options_for_plan(options))
    _, prefix = _examined(plan)
    command = "envdoctor fix " + " ".join(sys.argv[2:])
    try:
        # A run that may change the environment holds its lock from before the checks run:
        # its plan is never made while another run is half-way.
        with jr.locked(prefix, command) if yes or undo or _on_tty() else contextlib.nullcontext():
            code = _undo(plan) if undo else _fix(plan, from_file, yes, allow_system, command)
    except (jr.LockHeld, jr.JournalError) as e:
        click.echo(f"envdoctor: {e}", err=True)
        code = ExitCode.USAGE
    raise SystemExit(code)


def _fix(plan, from_file: str | None, yes: bool, allow_system: bool, command: str) -> ExitCode:
    from envdoctor.core.report import exit_code

    why, report = _report_from(from_file, plan) if from_file else ("", _check_run(plan))
    if report.interrupted:
        return ExitCode.INTERRUPTED
    steps = make_steps(report, allow_system, _examined(plan)[0])
    show_plan(steps, *_examined(plan))
    if why:
        click.echo(f"\nNothing run: {why}.")
        return ExitCode.USAGE if yes else exit_code(report)
    if not _confirmed(yes, steps):
        return exit_code(report)
    return _apply(plan, steps, command)
