"""The fact store: lazy, cached, thread-safe; a fact that cannot be had keeps its reason."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from envdoctor.core.api import FactSpec, Missing, ProbeError, ProbeRaised, Unavailable


@dataclass(frozen=True)
class FactOutcome:
    """A computed fact: its value, or why it is unavailable, or the error that stopped it."""

    name: str
    value: Any = None
    reason: str = ""  # set when unavailable: dependents skip with it
    error: str = ""  # set when the provider crashed or its probe died: dependents are errors
    duration: float = 0.0

    @property
    def available(self) -> bool:
        return not self.reason and not self.error


class FactStore:
    """Resolves facts by name. ``given`` values (specials such as ``probe``, or injected test
    facts) take precedence over providers."""

    def __init__(self, providers: Mapping[str, FactSpec], given: Mapping[str, Any] | None = None) -> None:
        self.providers = dict(providers)
        self._given = dict(given or {})
        self._outcomes: dict[str, FactOutcome] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._local = threading.local()

    def outcome(self, name: str) -> FactOutcome:
        if name in self._given:
            value = self._given[name]
            if isinstance(value, Unavailable):
                return FactOutcome(name, reason=value.reason)
            if isinstance(value, Missing):
                return FactOutcome(name, reason=value.reason)
            return FactOutcome(name, value)
        done = self._outcomes.get(name)
        if done is not None:
            return done
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        if name in stack:
            return FactOutcome(name, error=f"fact {name!r} depends on itself ({' -> '.join([*stack, name])})")
        with lock:
            done = self._outcomes.get(name)
            if done is None:
                stack.append(name)
                try:
                    done = self._compute(name)
                finally:
                    stack.pop()
                self._outcomes[name] = done
        return done

    def _compute(self, name: str) -> FactOutcome:
        spec = self.providers.get(name)
        if spec is None:
            return FactOutcome(name, error=f"no provider for fact {name!r}")
        start = time.monotonic()
        kwargs, blocked = self.arguments(spec.params)
        if blocked is not None:
            return FactOutcome(name, reason=blocked.reason, error=blocked.error, duration=time.monotonic() - start)
        try:
            value = spec.func(**kwargs)
        except Unavailable as e:
            return FactOutcome(name, reason=e.reason, duration=time.monotonic() - start)
        except ProbeError as e:
            return FactOutcome(name, error=e.diagnosis, duration=time.monotonic() - start)
        except ProbeRaised as e:
            return FactOutcome(name, error=f"its probe raised {e}", duration=time.monotonic() - start)
        except Exception as e:  # noqa: BLE001 - a crashing provider must not crash the run
            return FactOutcome(
                name, error=f"fact {name!r} could not be gathered: {type(e).__name__}: {e}", duration=time.monotonic() - start
            )
        except BaseException as e:  # sys.exit() in a provider neither (issue 14)
            if isinstance(e, KeyboardInterrupt) and threading.current_thread() is threading.main_thread():
                raise
            return FactOutcome(
                name,
                error=f"fact {name!r} raised {type(e).__name__}({e!s}), which would have ended the whole run",
                duration=time.monotonic() - start,
            )
        return FactOutcome(name, value, duration=time.monotonic() - start)

    def arguments(self, params) -> tuple[dict[str, Any], FactOutcome | None]:
        """Keyword arguments for a provider or check; or the first unavailable required fact."""
        kwargs: dict[str, Any] = {}
        for p in params:
            out = self.outcome(p.name)
            if out.error:
                return {}, out
            if out.reason:
                if p.optional:
                    kwargs[p.name] = Missing(p.name, out.reason)
                    continue
                return {}, out
            kwargs[p.name] = out.value
        return kwargs, None

    def computed(self) -> dict[str, FactOutcome]:
        return dict(self._outcomes)
