"""Every file envdoctor writes goes through one writer (envdoctor.core.outputs): atomic, never
through a link a stranger planted in a shared directory, never into a FIFO or a device, and the
file keeps its mode. Real files, links, FIFOs and devices; "another user" is uid 65534 (the tests
run as root, who may give files away; root also bypasses permission checks, so what is tested
is envdoctor's own refusal, not the kernel's)."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys

import pytest

from envdoctor.core import outputs
from envdoctor.core.outputs import Refused, target_problem, write_atomic
from tests.conftest import REPO, run_cli

STRANGER = 65534  # nobody
REPORTS = REPO / "tests" / "fixtures" / "reports"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


def _shared(tmp_path):
    """A directory like /tmp: sticky and anyone may write to it."""
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o1777)
    return d


def _strangers_file(tmp_path, name="precious"):
    """A file of another user's, with content that must survive."""
    d = tmp_path / "victim"
    d.mkdir(exist_ok=True)
    f = d / name
    f.write_text("precious\n")
    os.chown(f, STRANGER, STRANGER)
    return f


def _plant(link, target) -> None:
    """A symbolic link at ``link`` that another user made."""
    os.symlink(target, link)
    os.lchown(link, STRANGER, STRANGER)


def _left(d) -> list[str]:
    return sorted(os.listdir(d))


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


# ---- the writer ---------------------------------------------------------------------------------


def test_a_new_file_is_written_with_the_umask_mode_and_nothing_else_is_left(tmp_path):
    target = tmp_path / "r.json"
    write_atomic(str(target), "{}\n")
    assert target.read_text() == "{}\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()
    assert _left(tmp_path) == ["r.json"]


def test_rewriting_a_file_keeps_its_mode(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    target.chmod(0o600)
    write_atomic(str(target), "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o600


@needs_root
def test_root_rewriting_a_users_file_keeps_its_owner_and_mode(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    target.chmod(0o640)
    os.chown(target, STRANGER, STRANGER)
    write_atomic(str(target), "new")
    st = target.stat()
    assert target.read_text() == "new" and (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (STRANGER, STRANGER, 0o640)


def test_the_users_own_link_is_written_through_and_stays_a_link(tmp_path):
    (tmp_path / "reports").mkdir()
    real = tmp_path / "reports" / "latest.json"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "r.json"
    link.symlink_to("reports/latest.json")
    write_atomic(str(link), "new")
    assert link.is_symlink() and os.readlink(link) == "reports/latest.json"
    assert real.read_text() == "new" and stat.S_IMODE(real.stat().st_mode) == 0o600
    assert _left(tmp_path / "reports") == ["latest.json"]


def test_a_dangling_own_link_gets_its_target_created(tmp_path):
    link = tmp_path / "r.json"
    link.symlink_to(tmp_path / "new.json")
    write_atomic(str(link), "x")
    assert link.is_symlink() and (tmp_path / "new.json").read_text() == "x"


@needs_root
def test_a_strangers_link_in_a_shared_directory_is_not_followed(tmp_path):
    shared, victim = _shared(tmp_path), _strangers_file(tmp_path)
    link = shared / "report.json"
    _plant(link, victim)
    with pytest.raises(Refused, match="symbolic link owned by uid 65534"):
        write_atomic(str(link), "report")
    assert victim.read_text() == "precious\n" and link.is_symlink() and _left(shared) == ["report.json"]
    assert "owned by uid 65534" in target_problem(str(link))


@needs_root
def test_a_strangers_link_to_a_directory_in_a_shared_directory_is_not_followed(tmp_path):
    shared = _shared(tmp_path)
    (tmp_path / "victim").mkdir()
    _plant(shared / "out", tmp_path / "victim")
    assert "symbolic link owned by uid 65534" in target_problem(str(shared / "out" / "r.json"))
    with pytest.raises(Refused):
        write_atomic(str(shared / "out" / "r.json"), "report")
    assert _left(tmp_path / "victim") == []


def test_the_users_own_link_in_a_shared_directory_is_followed(tmp_path):
    shared = _shared(tmp_path)
    real = tmp_path / "mine.json"
    (shared / "r.json").symlink_to(real)  # made by this user
    write_atomic(str(shared / "r.json"), "report")
    assert real.read_text() == "report" and (shared / "r.json").is_symlink()


@needs_root
def test_a_strangers_file_in_a_shared_directory_is_not_replaced(tmp_path):
    shared = _shared(tmp_path)
    planted = shared / "report.json"
    planted.write_text("theirs")
    planted.chmod(0o666)  # were it kept, anyone could read the report
    os.chown(planted, STRANGER, STRANGER)
    with pytest.raises(Refused, match="owned by uid 65534"):
        write_atomic(str(planted), "report")
    assert planted.read_text() == "theirs" and _left(shared) == ["report.json"]


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "link to a device", "link to a fifo"])
def test_a_target_that_is_not_a_regular_file_is_refused(tmp_path, kind):
    path = tmp_path / "r.json"
    if kind.endswith("fifo"):
        os.mkfifo(tmp_path / "fifo")
    if kind == "fifo":
        path = tmp_path / "fifo"
    elif kind == "device":
        path = "/dev/null"
    elif kind == "directory":
        path = tmp_path
    elif kind == "link to a device":
        path.symlink_to("/dev/null")
    else:
        path.symlink_to(tmp_path / "fifo")
    why = target_problem(str(path))
    assert why and ("it is a directory" if kind == "directory" else "regular files only") in why, why
    with pytest.raises(Refused):
        write_atomic(str(path), "report")  # the old writer opened a FIFO and waited for a reader


def test_a_failed_write_leaves_the_previous_file_whole_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text("previous")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(str(target), "x" * 100_000)
    assert target.read_text() == "previous" and _left(tmp_path) == ["r.json"]


@needs_root
def test_the_temporary_file_never_opens_a_planted_name(tmp_path, monkeypatch):
    """A link planted where the temporary file would go is skipped (O_EXCL|O_NOFOLLOW), not
    written through."""
    shared, victim = _shared(tmp_path), _strangers_file(tmp_path)
    names = iter(["planted", "free"])
    monkeypatch.setattr(outputs.secrets, "token_hex", lambda n: next(names))
    _plant(shared / f"{outputs.PREFIX}planted.tmp", victim)
    write_atomic(str(shared / "r.json"), "report")
    assert victim.read_text() == "precious\n" and (shared / "r.json").read_text() == "report"
    assert _left(shared) == [f"{outputs.PREFIX}planted.tmp", "r.json"]


def test_a_missing_directory_is_said_so(tmp_path):
    assert target_problem(str(tmp_path / "nope" / "r.json")) == f"directory {tmp_path / 'nope'} does not exist"


# ---- every command and every output option ------------------------------------------------------

PAIR = (str(REPORTS / "v1.0-cpu-box.json"), str(REPORTS / "v1.0-minimal.json"))
PASTE = REPO / "tests" / "fixtures" / "triage" / "003-driver-too-old-11000-container-cu121.txt"
QUICK = ("check", "--select", "system.python", "--no-color")
OUT = "envdoctor.prom"  # the name --textfile DIR writes; any name for the others
WRITERS = {
    "check --output": lambda p: (*QUICK, "--output", p),
    "check --json": lambda p: (*QUICK, "--json", p),
    "check --junit-xml": lambda p: (*QUICK, "--junit-xml", p),
    "check --markdown": lambda p: (*QUICK, "--markdown", p),
    "check --textfile": lambda p: (*QUICK, "--textfile", os.path.dirname(p)),  # DIR/envdoctor.prom
    "diff -o": lambda p: ("diff", *PAIR, "-o", p),
    "fleet -o": lambda p: ("fleet", *PAIR, "-o", p),
    "triage -o": lambda p: ("triage", str(PASTE), "-o", p),
    "triage-event -o": lambda p: ("triage-event", str(REPO / "tests" / "fixtures" / "github_events" / "edited_nccl_shm.json"), "-o", p),
    "baseline": lambda p: ("baseline", p),
}


@needs_root
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_no_command_writes_through_a_strangers_link(tmp_path, writer):
    shared, victim = _shared(tmp_path), _strangers_file(tmp_path)
    link = shared / OUT
    _plant(link, victim)
    r = run_cli(*WRITERS[writer](str(link)), timeout=120)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "owned by uid 65534" in lines[0], (r.returncode, r.stderr)
    assert victim.read_text() == "precious\n" and os.readlink(link) == str(victim) and _left(shared) == [OUT]


@pytest.mark.slow
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_no_command_writes_into_a_fifo(tmp_path, writer):
    fifo = tmp_path / OUT
    os.mkfifo(fifo)
    r = run_cli(*WRITERS[writer](str(fifo)), timeout=120)  # the old writers waited for a reader
    assert r.returncode == 2 and "FIFO" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.slow
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_command_writes_through_the_users_own_link_and_keeps_the_mode(tmp_path, writer):
    real = tmp_path / "real"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / OUT
    link.symlink_to(real)
    r = run_cli(*WRITERS[writer](str(link)), timeout=240)
    assert r.returncode in (0, 1), r.stderr
    assert link.is_symlink() and real.read_text() != "old" and stat.S_IMODE(real.stat().st_mode) == 0o600
    assert _left(tmp_path) == sorted([OUT, "real"])


@pytest.mark.slow
def test_a_fifo_output_is_refused_before_the_run(tmp_path):
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "-m", "envdoctor", *QUICK, "--json", str(fifo)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert f"cannot write the report to {fifo} (--json): it is a FIFO (named pipe)" in r.stderr
