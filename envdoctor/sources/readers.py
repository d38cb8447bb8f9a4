"""Paste readers a plugin can add: ``@reader("name")`` (public as ``envdoctor.reader``) or an
entry point in the group ``envdoctor.readers`` naming such a function.

A reader receives the paste as clean lines (quoting, colours, fences and HTML removed) and a
:class:`PasteWriter`, through which it states what it read: torch's version, a package, a GPU,
the driver, the CUDA toolkit, the kind of dump it recognised. Facts from a reader rank below
the built-in tool readers (collect_env, nvidia-smi, pip), so a reader never overrides what a
tool measured; the line each fact came from is quoted as evidence. A reader that raises is
skipped with a note: a plugin cannot take triage down.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envdoctor.core.scrub import REDACTED, is_secret_key
from envdoctor.sources._acc import RANK_CONDA, RANK_ERROR, Acc, cuda_from_tag

ENTRY_POINT_GROUP = "envdoctor.readers"
RANK_READER = RANK_CONDA  # above an error message's hint, below any tool's own output

ReaderFn = Callable[[list[str], "PasteWriter"], None]


@dataclass(frozen=True)
class Reader:
    """A registered paste reader: its name, function and where it comes from."""

    name: str
    fn: ReaderFn
    source: str = "built-in"


_REGISTERED: dict[str, Reader] = {}
_ENTRY_POINTS: list[Reader] | None = None


def reader(name: str) -> Callable[[ReaderFn], ReaderFn]:
    """Register ``fn(lines, writer)`` as a paste reader under ``name`` (the last one wins)."""

    def register(fn: ReaderFn) -> ReaderFn:
        module = getattr(fn, "__module__", "") or ""
        source = "built-in" if module.startswith("envdoctor.") else module
        _REGISTERED[name] = Reader(name, fn, source)
        return fn

    return register


def _entry_point_readers() -> list[Reader]:
    global _ENTRY_POINTS
    if _ENTRY_POINTS is None:
        found: list[Reader] = []
        try:
            from envdoctor.core.entry_points import installed

            for ep in installed(ENTRY_POINT_GROUP):
                found.append(Reader(ep.name, _loader(ep), f"entry point {ep.value}"))
        except Exception:  # noqa: BLE001 - broken metadata must not stop triage
            found = []
        _ENTRY_POINTS = found
    return _ENTRY_POINTS


def _loader(ep: Any) -> ReaderFn:
    """Load the entry point only when a paste is read (and report a load failure there)."""

    def run(lines: list[str], writer: PasteWriter) -> None:
        fn = ep.load()
        fn(lines, writer)

    return run


def registered() -> list[Reader]:
    """Every reader beyond the built-in tool readers: the ones shipped here (envdoctor's own
    modules for other tools' dumps), ``@reader`` registrations, then entry points."""
    from envdoctor.sources import tool_dumps  # noqa: F401 - registers the shipped readers

    names = set(_REGISTERED)
    return list(_REGISTERED.values()) + [r for r in _entry_point_readers() if r.name not in names]


def run_readers(lines: list[str], acc: Acc) -> None:
    writer = PasteWriter(acc)
    for r in registered():
        try:
            r.fn(lines, writer)
        except Exception as e:  # noqa: BLE001 - a plugin reader's bug is a note, not a crash
            acc.note(f"the paste reader {r.name!r} ({r.source}) failed: {type(e).__name__}: {str(e)[:200]}")


class PasteWriter:
    """What a reader may state about the paste (each with the line it read it from)."""

    def __init__(self, acc: Acc) -> None:
        self._acc = acc

    def kind(self, name: str) -> None:
        """The kind of dump recognised (listed in the answer's ``kinds``)."""
        self._acc.kind(name)

    def torch(self, version: str, line: str) -> None:
        """torch's version, with its local tag (``2.3.1+cu121``) when the dump shows it."""
        from envdoctor.sources.listings import add_torch_from_version

        add_torch_from_version(self._acc, version, line, RANK_READER)

    def package(self, name: str, version: str, line: str) -> None:
        self._acc.put_dist(name, version, line, RANK_READER, "")
        if name.lower() in ("torch", "pytorch"):
            self.torch(version, line)

    def torch_cuda_hint(self, cuda: str, line: str) -> None:
        """A CUDA build of torch for this CUDA (``cudatoolkit=11.3`` beside a conda pytorch)."""
        self._acc.put("torch", "kind", "cuda", line, RANK_READER)
        self._acc.put("torch", "cuda", cuda, line, RANK_READER)

    def torch_cuda(self, cuda: str | None, line: str) -> None:
        """torch's own ``torch.version.cuda``: a CUDA version, or None for a build without CUDA."""
        if cuda is None:
            self._acc.put("torch", "no_cuda", True, line, RANK_READER)
        else:
            self.torch_cuda_hint(cuda, line)

    def torch_index(self, tag: str, line: str) -> None:
        """torch installed from one of its own indexes (``cu124``, ``cpu``): that build, unless
        the version shown says otherwise."""
        if tag == "cpu":
            self._acc.put("torch", "no_cuda", True, line, RANK_READER)
        elif cuda := cuda_from_tag(tag):
            self.torch_cuda_hint(cuda, line)

    def gpu(self, name: str, line: str, cc: str | None = None, index: int | None = None) -> None:
        """A GPU by name (its compute capability when the dump shows it); without ``index`` a
        name already stated is not counted twice."""
        gpus = self._gpus()
        if index is None and any(g.get("name") == name for g in gpus):
            return
        gpu: dict[str, Any] = {"index": len(gpus) if index is None else index, "name": name}
        if cc:
            gpu["cc"], gpu["cc_source"] = cc, "pasted"
        gpus.append(gpu)
        self._acc.evidence.setdefault(f"gpus@{RANK_READER}", line.strip()[:300])

    def amd_gpu(self, gfx: str, line: str, name: str | None = None) -> None:
        """An AMD GPU by its gfx target (``gfx1032``); a target already stated is not counted twice
        (rocminfo names each agent twice: ``Name: gfx1032`` and its ISA ``amdgcn-amd-amdhsa--gfx1032``)."""
        for g in self._acc.amd_gpus:
            if g["gfx"] == gfx:
                g["name"] = g.get("name") or name
                return
        self._acc.amd_gpus.append({"gfx": gfx, "name": name})
        self._acc.evidence.setdefault("amd_gpus", line.strip()[:300])

    def env_var(self, name: str, value: str, line: str) -> None:
        """An environment variable the paste shows set (``export HSA_OVERRIDE_GFX_VERSION=10.3.0``);
        a secret-looking name's value is hidden here already, as collect_env's reader does."""
        secret = is_secret_key(name)
        self._acc.env_vars.setdefault(name, REDACTED if value and secret else value)
        self._acc.evidence.setdefault(f"env.{name}", f"{name}={REDACTED}" if secret else line.strip()[:300])

    def gpus_known(self) -> bool:
        """Whether any reader has stated a GPU yet (a tool's listing or a ``GPU:`` line)."""
        return any(gpus for _, gpus in self._acc.gpu_sets)

    def driver(self, version: str, line: str) -> None:
        self._acc.put("driver", "version", version, line, RANK_READER)

    def driver_cuda(self, version: str, line: str) -> None:
        self._acc.put("driver", "cuda_version", version, line, RANK_READER)

    def toolkit(self, version: str, line: str) -> None:
        self._acc.put("cuda_toolkit", "version", ".".join(version.split(".")[:2]), line, RANK_READER)

    def python(self, version: str, line: str) -> None:
        self._acc.put("python", "version", version, line, RANK_READER)

    def cuda_available(self, available: bool, line: str) -> None:
        self._acc.put("runtime", "cuda_available", available, line, RANK_ERROR)

    def cuda_asked(self, line: str, said: str | None = None) -> None:
        """The reporter asked CUDA of this torch and shows it answered no
        (``torch.cuda.is_available()`` False): a CPU build then needs no other sign of a GPU.
        ``said``: the words that show it (the line by default)."""
        self._acc.put("torch", "cuda_asked", (said or line).strip()[:200], line, RANK_READER)

    def _gpus(self) -> list[dict]:
        for rank, gpus in self._acc.gpu_sets:
            if rank == RANK_READER:
                return gpus
        fresh: list[dict] = []
        self._acc.gpu_sets.append((RANK_READER, fresh))
        return fresh
