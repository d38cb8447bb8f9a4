"""The runner: evaluates checks against the fact store, contains every error, keeps time.

Checks run on worker threads so the cheap static checks proceed while a probe works (probe
calls themselves are serialised by the probe client). Checks that need the probe are started
first, so the torch import in the worker begins at once. When the run's deadline passes or the
user presses Ctrl-C, the probe workers are killed and every unfinished check becomes an
``error`` row saying so; the partial report is still returned.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from envdoctor.core.api import CheckSpec, ProbeError, ProbeRaised, Result, Skip, Status
from envdoctor.core.facts import FactStore
from envdoctor.core.outcome import CheckOutcome
from envdoctor.core.signals import stop_requested


def user_interrupt(e: BaseException) -> bool:
    """The user's Ctrl-C reaches only the main thread; checks and facts run on worker threads,
    so a KeyboardInterrupt there (or a SystemExit anywhere) is the code's own doing."""
    return isinstance(e, KeyboardInterrupt) and threading.current_thread() is threading.main_thread()


def _row(
    spec: CheckSpec, status: Status, message: str, *, hint: str = "", duration: float = 0.0, result: Result | None = None
) -> CheckOutcome:
    return CheckOutcome(
        id=spec.id,
        title=spec.title,
        status=status,
        message=message,
        hint=hint,
        tags=spec.tags,
        source=spec.source,
        details=dict(result.details) if result else {},
        items=result.items if result else (),
        fixes=result.fixes if result else (),
        action=result.action if result else "",
        duration=duration,
    )


def evaluate(spec: CheckSpec, store: FactStore, *, on_abandon: Callable[[threading.Thread], None] | None = None) -> CheckOutcome:
    """Run one check; never raises. A check declaring ``timeout`` gets that long for its own
    body (the facts it asks for are shared by every check, so their time is not its own)."""
    start = time.monotonic()
    kwargs, blocked = store.arguments(spec.params)
    if blocked is not None:
        if blocked.error:
            return _row(spec, Status.ERROR, f"could not run: {blocked.error}", duration=time.monotonic() - start)
        return _row(spec, Status.SKIP, blocked.reason, duration=time.monotonic() - start)
    if not spec.timeout:
        return _judge(spec, kwargs, start)
    box: list[CheckOutcome] = []
    body = threading.Thread(target=lambda: box.append(_judge(spec, kwargs, start)), daemon=True, name=f"envdoctor-check {spec.id}")
    body.start()
    body.join(spec.timeout)
    if box:
        return box[0]
    # A thread cannot be killed: leave it (daemon) and let the run go on; free what it holds.
    if on_abandon is not None:
        on_abandon(body)
    return _row(
        spec,
        Status.ERROR,
        f"did not finish within its own timeout of {spec.timeout:g} s",
        hint=f"The check ({spec.source}) hung or is too slow here; the rest of the run went on without it.",
        duration=time.monotonic() - start,
    )


class ContainedOutcome(Exception):  # noqa: N818 - carries a row, not an error
    """A contained check's row, as the child that ran it judged it (core.plugin_host): taken as it is."""

    def __init__(self, row: dict) -> None:
        super().__init__(row.get("id", "?"))
        self.row = row


def _contained_row(spec: CheckSpec, row: dict, duration: float) -> CheckOutcome:
    from envdoctor.core.report import result_from_dict

    out = result_from_dict(row)
    # Only the row's verdict comes from the child: the id, title, tags and source stay the parent's.
    return replace(out, id=spec.id, title=spec.title, tags=spec.tags, source=spec.source, duration=duration)


def _judge(spec: CheckSpec, kwargs: dict, start: float) -> CheckOutcome:
    try:
        result = spec.func(**kwargs)
    except ContainedOutcome as e:
        return _contained_row(spec, e.row, time.monotonic() - start)
    except Skip as e:
        return _row(spec, Status.SKIP, e.reason, duration=time.monotonic() - start)
    except ProbeError as e:
        return _row(spec, Status.ERROR, e.diagnosis, duration=time.monotonic() - start)
    except ProbeRaised as e:
        return _row(spec, Status.ERROR, f"its probe raised {e.exc_type}: {e.message}", duration=time.monotonic() - start)
    except Exception as e:  # noqa: BLE001 - a crashing check is a row, not a crash
        return _row(spec, Status.ERROR, f"check crashed: {type(e).__name__}: {e}", duration=time.monotonic() - start)
    except BaseException as e:  # sys.exit() in a check must not end the run (issue 14)
        if user_interrupt(e):
            raise
        return _row(
            spec,
            Status.ERROR,
            f"check raised {type(e).__name__}({e!s}), which would have ended the whole run",
            duration=time.monotonic() - start,
        )
    duration = time.monotonic() - start
    if not isinstance(result, Result):
        return _row(spec, Status.ERROR, f"check returned {type(result).__name__}, not a Result", duration=duration)
    if result.status is Status.ERROR:
        return _row(spec, Status.ERROR, f"check returned 'error' itself (only the runner assigns it): {result.message}", duration=duration)
    return _row(spec, result.status, result.message, hint=result.hint, duration=duration, result=result)


class Progress:
    """Receives start and finish events (from worker threads)."""

    def started(self, spec: CheckSpec) -> None: ...

    def finished(self, outcome: CheckOutcome) -> None: ...


@dataclass
class RunState:
    """The rows of a run so far, and whether it was interrupted or ran out of time."""

    outcomes: dict[str, CheckOutcome]
    interrupted: bool = False
    timed_out: bool = False


def run_checks(
    specs: Sequence[CheckSpec],
    store: FactStore,
    *,
    deadline: float | None = None,
    jobs: int = 8,
    progress: Progress | None = None,
    on_stop: Callable[[], None] | None = None,
    on_abandon: Callable[[threading.Thread], None] | None = None,
) -> RunState:
    """Evaluate ``specs``. ``deadline`` is a monotonic time; ``on_stop`` kills probes;
    ``on_abandon`` frees what a check left running past its own timeout holds (its probe)."""
    progress = progress or Progress()
    ordered = sorted(specs, key=lambda s: 0 if any(p.name == "probe" for p in s.params) else 1)
    import queue  # on use: a paste's triage judges without the worker threads

    todo: queue.Queue[CheckSpec] = queue.Queue()
    for s in ordered:
        todo.put(s)
    state = RunState({})
    done = threading.Condition()
    running: dict[str, float] = {}

    def worker() -> None:
        while True:
            try:
                spec = todo.get_nowait()
            except queue.Empty:
                return
            with done:
                if state.interrupted or state.timed_out:
                    return
                running[spec.id] = time.monotonic()
            progress.started(spec)
            outcome = evaluate(spec, store, on_abandon=on_abandon)
            with done:
                running.pop(spec.id, None)
                if spec.id not in state.outcomes:
                    state.outcomes[spec.id] = outcome
                    progress.finished(outcome)
                done.notify_all()

    threads = [threading.Thread(target=worker, daemon=True, name=f"envdoctor-check-{i}") for i in range(max(1, min(jobs, len(specs))))]
    try:
        for t in threads:  # inside the try: a Ctrl-C while they start still gives the partial report
            t.start()
        _wait_for_workers(state, done, threads, len(specs), deadline)
    except KeyboardInterrupt:
        state.interrupted = True
    if state.timed_out or state.interrupted:
        if on_stop is not None:
            on_stop()
        # Give checks whose probe was just killed a moment to record their own diagnosis.
        grace_end = time.monotonic() + 1.0
        with done:
            while len(state.outcomes) < len(specs) and time.monotonic() < grace_end and running:
                done.wait(0.05)
    _mark_unfinished(specs, state, done, running)
    return state


def _wait_for_workers(state: RunState, done: threading.Condition, threads: list[threading.Thread], total: int, deadline) -> None:
    """Until every check has an outcome, the workers are gone, or the run's deadline passes."""
    with done:
        while len(state.outcomes) < total:
            if stop_requested():  # a signal whose KeyboardInterrupt the interpreter swallowed
                raise KeyboardInterrupt
            if deadline is not None and time.monotonic() >= deadline:
                state.timed_out = True
                break
            if not any(t.is_alive() for t in threads):
                break
            done.wait(0.1 if deadline is None else max(0.0, min(0.1, deadline - time.monotonic())))


def _mark_unfinished(specs: Sequence[CheckSpec], state: RunState, done: threading.Condition, running: dict[str, float]) -> None:
    """Every check without an outcome becomes an ``error`` row saying whether it was cut off or never started."""
    why = "interrupted (Ctrl-C) before it finished" if state.interrupted else "did not finish within the run's --timeout"
    with done:
        for spec in specs:
            if spec.id not in state.outcomes:
                was_running = spec.id in running
                msg = (
                    why
                    if was_running
                    else why.replace("before it finished", "before it started").replace("did not finish", "was not started")
                )
                state.outcomes[spec.id] = _row(spec, Status.ERROR, msg)
