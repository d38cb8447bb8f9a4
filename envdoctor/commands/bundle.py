"""``envdoctor bundle [-o FILE]``: one archive a maintainer can reproduce a failure from.

It runs the checks as ``envdoctor check`` does, then writes a gzipped tar (``tar xzf``; Python's
own tarfile, one compressed stream, file modes kept so a repro stays executable; GitHub issues
take ``.gz`` attachments) holding, under ``envdoctor-bundle/``:

* ``report.json`` and ``report.md``: the reports, redacted as ``check`` redacts them;
* for each failing or erroring check that declares a repro (the smokes): ``repro_<id>.py``, the
  check's step as a standalone script (torch alone, no envdoctor import), and ``<id>.log``, what
  its probe printed (stdout/stderr and traceback as captured);
* ``env.txt``: the variables that steer torch, Triton and CUDA (the report's allowlisted
  ``env_vars``), ``nvidia-smi-q.txt`` (or why it is absent) and, with ``--nvidia-bug-report``,
  the tail of ``nvidia-bug-report.sh --safe-mode``'s log;
* ``manifest.json`` (each file's size and sha256, what was cut) and ``README.md``.

Nothing secret leaves: every file's content goes through :func:`envdoctor.core.scrub.scrub`
before it is counted, hashed and written. Small: at most ``MAX_TOTAL`` bytes unpacked; a log
longer than its share keeps its tail, and the file and the manifest say what was cut.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import time
from dataclasses import dataclass, field
from typing import Any

import click

from envdoctor.core.exitcode import ExitCode
from envdoctor.core.selection import PROFILE_TABLE

ROOT = "envdoctor-bundle"  # the folder every member lies in (envdoctor.sources.bundle reads it)
MAX_TOTAL = 1024 * 1024
RESERVE = 48 * 1024  # kept for README.md and manifest.json, written last
LIMITS = {"log": 64 * 1024, "env": 32 * 1024, "nvidia-smi": 192 * 1024, "bug-report": 384 * 1024}
SMI_TIMEOUT = 60.0
BUG_REPORT_TIMEOUT = 180.0


@dataclass
class Bundle:
    """The members written so far; every text goes through the scrubber in :meth:`add`."""

    env: dict
    anon: Any = None  # with --redact: the report's Anonymizer, applied to every file after the scrubber
    files: list[dict] = field(default_factory=list)
    data: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def used(self) -> int:
        return sum(len(d) for d, _ in self.data.values())

    def add(self, name: str, text: str, *, limit: int | None = None, mode: int = 0o644, note: str = "", scrubbed: bool = False) -> None:
        """Scrub ``text`` (``scrubbed``: JSON whose strings :meth:`add_json` scrubbed), keep its
        tail within ``limit`` and the bundle's budget, record it."""
        from envdoctor.core.scrub import scrub

        clean = text if scrubbed else scrub(text, env=self.env)
        if self.anon is not None and not scrubbed:
            clean = self.anon.text(clean)
        room = MAX_TOTAL - RESERVE - self.used if name not in ("README.md", "manifest.json") else MAX_TOTAL - self.used
        kept, cut = tail(clean, min(limit or room, room))
        entry = {"name": name, "bytes": len(kept), "sha256": hashlib.sha256(kept).hexdigest()}
        if cut:
            entry["cut"] = cut
        if note:
            entry["note"] = scrub(note, env=self.env)
        self.data[name] = (kept, mode)
        if name != "manifest.json":
            self.files.append(entry)

    def add_json(self, name: str, value) -> None:
        """A JSON file: every string in it (keys included) scrubbed before it is serialised, so
        the JSON stays valid (a report's secret-named keys were hidden at the report boundary;
        here a count under "pass" is a number, not a password)."""
        from envdoctor.core.scrub import scrub, walk

        clean = scrub(value, env=self.env, key_rule=False)
        if self.anon is not None:
            clean = walk(clean, self.anon.text)
        text = json.dumps(clean, indent=2, ensure_ascii=False) + "\n"
        self.add(name, text, scrubbed=True)

    def archive(self) -> bytes:
        buf = io.BytesIO()
        now = int(time.time())
        with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
            first = [n for n in ("README.md", "manifest.json") if n in self.data]
            for name in first + [n for n in self.data if n not in first]:  # what to read first, first
                data, mode = self.data[name]
                info = tarfile.TarInfo(f"{ROOT}/{name}")
                info.size, info.mode, info.mtime = len(data), mode, now
                tar.addfile(info, io.BytesIO(data))
        return buf.getvalue()


def tail(text: str, limit: int) -> tuple[bytes, str]:
    """``text`` as UTF-8 within ``limit`` bytes: whole, or its last lines under a first line
    that says what was cut; the cut ('' when whole) in words, for the manifest."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return data, ""
    keep = data[-max(limit - 200, 0) :]
    newline = keep.find(b"\n")
    keep = keep[newline + 1 :] if 0 <= newline < len(keep) - 1 else keep
    cut = f"the first {len(data) - len(keep)} of {len(data)} bytes left out; the last {len(keep)} kept"
    head = f"[envdoctor bundle: {cut}]\n".encode()
    return head + keep.decode("utf-8", "ignore").encode("utf-8"), cut


# --- what goes in -----------------------------------------------------------------------------


def _comment(text: str) -> str:
    """One line of a Python comment, whatever ``text`` holds (no line break can end it)."""
    return "".join(c if c.isprintable() else " " for c in text)[:300]


def add_repros(bundle: Bundle, report, checks) -> list[dict]:
    """A repro script and the captured output of each failing or erroring check that declares one."""
    from envdoctor.core.api import Status

    declared = {c.id: c.repro for c in checks if c.repro}
    shipped = []
    for row in report.results:
        if row.status not in (Status.FAIL, Status.ERROR) or row.id not in declared:
            continue
        try:
            template = repro_script(declared[row.id])
        except OSError as e:
            bundle.notes.append(f"{row.id}: its repro {os.path.basename(declared[row.id])} cannot be read ({e.strerror or e})")
            continue
        safe = re.sub(r"[^A-Za-z0-9_.\-]", "_", row.id).lstrip(".")  # a file name, never a path
        script, log = f"repro_{safe}.py", f"{safe}.log"
        header = (
            "#!/usr/bin/env python3\n"
            f"# envdoctor bundle: the failing step of {row.id}, on its own (torch alone, no envdoctor).\n"
            f"# On the machine it came from: {row.status.value}: {_comment(row.message)}\n"
            f"# Run it in the same environment (env.txt): python3 {script}   The check's own output: {log}\n"
        )
        bundle.add(script, header + template, mode=0o755)
        bundle.add(log, captured(row), limit=LIMITS["log"])
        shipped.append({"check": row.id, "status": row.status.value, "script": script, "log": log, "run": f"python3 {script}"})
    return shipped


# A template's line that names a helper module beside it, replaced by that module's text.
INLINE = re.compile(r"^from (_?[A-Za-z][A-Za-z0-9_]{0,60}) import [A-Za-z0-9_, ]{1,200}  # envdoctor-repro: inline$", re.M)
MAX_TEMPLATE = 256 * 1024


def repro_script(path: str) -> str:
    """The standalone script of a repro template: each ``from _x import ...  # envdoctor-repro:
    inline`` line replaced by the module ``_x.py`` beside it (what the templates share)."""
    folder = os.path.dirname(path)

    def read(p: str) -> str:
        with open(p, encoding="utf-8") as f:
            return f.read(MAX_TEMPLATE)

    def inline(m: re.Match) -> str:
        return (
            f"# --- {m.group(1)}.py, inlined by envdoctor bundle ---\n" + read(os.path.join(folder, m.group(1) + ".py")).strip() + "\n# ---"
        )

    return INLINE.sub(inline, read(path))


def captured(row) -> str:
    """What the check's probe printed, as its result keeps it: stdout/stderr, then the traceback."""
    lines = [f"# {row.id}: {row.status.value}", f"# message: {row.message}"] + ([f"# hint: {row.hint}"] if row.hint else [])
    details = dict(row.details or {})
    for key, title in (("output", "stdout/stderr of the probe, as captured"), ("traceback", "traceback")):
        value = details.pop(key, None)
        if isinstance(value, str) and value.strip():
            lines += ["", f"--- {title} ---", value.rstrip()]
    if details:
        lines += ["", "--- the other details of the result ---", json.dumps(details, indent=2, default=str)]
    if not any(k in (row.details or {}) for k in ("output", "traceback")):
        lines += ["", "(the result keeps no captured output: the message above is what the probe said)"]
    return "\n".join(lines) + "\n"


def env_text(report) -> tuple[str, str]:
    """env.txt: the allowlisted variables the report recorded; the note when none were."""
    values = (report.facts or {}).get("env_vars")
    if not isinstance(values, dict):
        return "# no check of this run recorded the environment variables (the env_vars fact)\n", "not recorded in this run"
    head = "# The variables that steer torch, Triton, CUDA, NCCL and the compilers (allowlisted; secrets hidden)\n"
    return head + "".join(f"{k}={v}\n" for k, v in sorted(values.items())), ""


def add_nvidia(bundle: Bundle, bug_report: bool) -> None:
    """nvidia-smi -q (under a timeout), and nvidia-bug-report.sh --safe-mode when asked for."""
    from envdoctor.core.subproc import run

    smi = run(["nvidia-smi", "-q"], timeout=SMI_TIMEOUT)
    if smi.ok:
        # A longer output reaches us as its tail already, marked with a leading ellipsis.
        longer = "its output was longer than the tail the command runner keeps" if smi.stdout.startswith("…") else ""
        bundle.add("nvidia-smi-q.txt", smi.stdout, limit=LIMITS["nvidia-smi"], note=longer)
    else:
        why = smi.describe()
        bundle.add("nvidia-smi-q.txt", f"# nvidia-smi -q gave nothing here: {why}\n{smi.stdout}{smi.stderr}", limit=LIMITS["log"], note=why)
    if bug_report:
        add_bug_report(bundle)


def add_bug_report(bundle: Bundle) -> None:
    """The tail of nvidia-bug-report.sh --safe-mode's log (it writes a .log.gz of many MB)."""
    import gzip
    import shutil
    import tempfile

    from envdoctor.core.subproc import run

    if shutil.which("nvidia-bug-report.sh") is None:
        bundle.notes.append("--nvidia-bug-report: nvidia-bug-report.sh is not on PATH (it comes with the NVIDIA driver)")
        return
    with tempfile.TemporaryDirectory(prefix="envdoctor-bundle-") as d:
        out = os.path.join(d, "nvidia-bug-report.log")
        done = run(["nvidia-bug-report.sh", "--safe-mode", "--output-file", out], timeout=BUG_REPORT_TIMEOUT, cwd=d)
        packed = out + ".gz"
        if not os.path.isfile(packed):
            bundle.notes.append(f"--nvidia-bug-report: no log came out ({done.describe()})")
            return
        with gzip.open(packed, "rb") as f:
            text = last_bytes(f, 2 * LIMITS["bug-report"]).decode("utf-8", "replace")
    note = "" if done.ok else done.describe()
    bundle.add("nvidia-bug-report.log", text, limit=LIMITS["bug-report"], note=note)


def last_bytes(f, n: int) -> bytes:
    """The last ``n`` bytes of a stream, reading it once in chunks (bounded memory); a gzip
    stream cut short (the tool killed at its deadline) gives what it holds up to the cut."""
    import zlib

    keep = b""
    try:
        while chunk := f.read(1024 * 1024):
            keep = (keep + chunk)[-n:]
    except (EOFError, OSError, zlib.error):
        pass
    return keep


# --- README and manifest ----------------------------------------------------------------------

NO_REPRO = "No repro: no smoke failed or errored on this machine, so there is no failing step to reproduce."


def readme(bundle: Bundle, report, shipped: list[dict], without: list[str]) -> str:
    """README.md: the verdict, how to run each repro (or that there is none), the files."""
    from envdoctor.core.report import verdict
    from envdoctor.core.scrub import scrub
    from envdoctor.reporters.escape import md_code, md_text

    counts = report.counts()
    lines = [
        "# envdoctor bundle",
        "",
        f"Made by envdoctor {md_text(report.tool_version)} at {md_text(report.started_at)}: "
        f"**{verdict(report).label}** ({counts['fail']} failed, {counts['error']} errors, {counts['warn']} warnings "
        f"of {len(report.results)} checks). The whole report: `report.md`, `report.json` (`envdoctor diff` and "
        "`envdoctor triage` read this archive as it is).",
        "",
        "## Repros",
        "",
    ]
    messages = {r.id: scrub(r.message, env=bundle.env) for r in report.results}
    for s in shipped:
        lines.append(
            f"- {md_code(s['check'])} ({s['status']}): {md_text(messages[s['check']])}  \n"
            f"  Run on its own, in the same environment: {md_code(s['run'])}; what the check captured: {md_code(s['log'])}"
        )
    if not shipped:
        lines.append(NO_REPRO)
    if without:
        lines += ["", "Failing without a repro of their own (see `report.md`): " + ", ".join(md_code(i) for i in without)]
    lines += ["", "## Files", "", "| file | bytes | sha256 | note |", "| --- | ---: | --- | --- |"]
    for f in bundle.files:
        note = "; ".join(x for x in (f.get("cut", ""), f.get("note", "")) if x)
        lines.append(f"| {md_code(f['name'], table=True)} | {f['bytes']} | `{f['sha256'][:16]}…` | {md_text(note)} |")
    lines.append("| `manifest.json` | | | every file's full sha256 |")
    if bundle.notes:
        lines += ["", "## Notes", ""] + [f"- {md_text(scrub(n, env=bundle.env))}" for n in bundle.notes]
    return "\n".join(lines) + "\n"


def manifest(bundle: Bundle, report, shipped: list[dict], without: list[str]) -> dict:
    from envdoctor.core.report import verdict

    return {
        "format": "envdoctor-bundle",
        "format_version": 1,
        "archive": "tar.gz",
        "envdoctor": report.tool_version,
        "created_at": report.started_at,
        "verdict": verdict(report).label,
        "counts": report.counts(),
        "repros": shipped,
        "no_repro": None if shipped else NO_REPRO,
        "failing_without_repro": without,
        "limit_bytes": MAX_TOTAL,
        "files": bundle.files,
        "notes": bundle.notes,
    }


def build(report, checks, env: dict, *, bug_report: bool = False, anon=None) -> Bundle:
    """The bundle of a protected report: every member scrubbed (and, with ``anon``, its
    identities replaced as the report's were), within MAX_TOTAL bytes."""
    from envdoctor.core.api import Status
    from envdoctor.reporters import render

    bundle = Bundle(dict(env), anon)
    bundle.add_json("report.json", json.loads(render(report, "json")))
    bundle.add("report.md", render(report, "markdown"))
    text, note = env_text(report)
    bundle.add("env.txt", text, limit=LIMITS["env"], note=note)
    shipped = add_repros(bundle, report, checks)
    add_nvidia(bundle, bug_report)
    have = {s["check"] for s in shipped}
    without = [r.id for r in report.results if r.status in (Status.FAIL, Status.ERROR) and r.id not in have]
    bundle.add("README.md", readme(bundle, report, shipped, without))
    bundle.add_json("manifest.json", manifest(bundle, report, shipped, without))
    return bundle


# --- the command ------------------------------------------------------------------------------


def default_name() -> str:
    return time.strftime("envdoctor-bundle-%Y%m%dT%H%M%SZ.tar.gz", time.gmtime())


def check_options(**given) -> dict:
    """The options of ``envdoctor check`` at their defaults, with ``given`` over them."""
    from envdoctor.commands.check import check_cmd

    with check_cmd.make_context("check", [], resilient_parsing=True) as ctx:
        return {**ctx.params, **given}


@click.command("bundle")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the archive to FILE (default: envdoctor-bundle-<UTC time>.tar.gz here)."
)
@click.option("-s", "--select", multiple=True, metavar="PATTERN", help="Run only matching checks (as `envdoctor check --select`).")
@click.option("-d", "--deselect", multiple=True, metavar="PATTERN", help="Leave out matching checks.")
@click.option(
    "--profile", type=click.Choice(list(PROFILE_TABLE)), default="default", show_default=True, help="As `envdoctor check --profile`."
)
@click.option("--timeout", type=float, default=None, help="Seconds the checks may take (as `envdoctor check --timeout`).")
@click.option("--checks-path", multiple=True, type=click.Path(), metavar="DIR", help="Also load check modules (*.py) from DIR.")
@click.option("--redact", is_flag=True, help="Also hide host, user, home paths, IP addresses and GPU UUIDs/serials.")
@click.option("--nvidia-bug-report", "bug_report", is_flag=True, help="Also run nvidia-bug-report.sh --safe-mode and keep its log's tail.")
def bundle_cmd(output, select, deselect, profile, timeout, checks_path, redact, bug_report) -> None:
    """Run the checks and write one archive a maintainer can reproduce from: the redacted reports, a standalone repro of each failing smoke with its captured output, the steering environment variables, nvidia-smi -q and a manifest."""
    from envdoctor.commands.check import make_plan, run
    from envdoctor.console import writable_target, write_report
    from envdoctor.core.compact import compact_report
    from envdoctor.core.redact import anonymizer, protect

    path = writable_target(output or default_name())
    given = {"select": select, "deselect": deselect, "profile": profile, "checks_path": checks_path, "redact": redact}
    plan = make_plan(**check_options(**given, **({"timeout": timeout} if timeout is not None else {})))
    raw = compact_report(run(plan), plan.registry.facts)
    anon = anonymizer(raw) if plan.redact else None
    report = protect(raw, plan.redact, anon=anon)
    if report.interrupted:
        click.echo("envdoctor bundle: interrupted; no bundle written", err=True)
        raise SystemExit(ExitCode.INTERRUPTED)
    bundle = build(report, plan.registry.checks, dict(os.environ), bug_report=bug_report, anon=anon)
    problem = write_report(path, bundle.archive())
    if problem:
        click.echo(f"envdoctor bundle: {problem}", err=True)
        raise SystemExit(ExitCode.USAGE)
    repros = [f["name"] for f in bundle.files if f["name"].startswith("repro_")]
    said = f"{len(repros)} repro(s): {', '.join(repros)}" if repros else "no repro (no smoke failed or errored)"
    click.echo(f"envdoctor bundle: wrote {path} ({len(bundle.data)} files, {bundle.used} bytes unpacked; {said})")
