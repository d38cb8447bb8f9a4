"""Tracebacks and single error lines, kept as text for the signature catalog
(``envdoctor/core/signatures.py``); plus the few facts an error states outright."""

from __future__ import annotations

from envdoctor.core.patterns import lazy
from envdoctor.sources._acc import RANK_ERROR, Acc

TRACEBACK = "Traceback (most recent call last):"
ERRORISH = lazy(
    r"(?i)(?:error|exception)\b|\b(?:fatal|failed|undefined symbol|cannot find -l|not compatible|too old|no kernel image|"
    r"bus error|segmentation fault|permission denied|cannot open shared object|not compiled with|no module named|warning|"
    r"can't load|cannot load|could not load|unable to load|killed|cannot be run|compiled using)\b"
)
HEADLESS = lazy(r'^\s{0,4}File "[^"]{1,1000}", line \d+')  # a traceback pasted without its first line
FOUND_VERSION = lazy(r"too old \(found version (\d{4,6})\)")
SITE_PY = lazy(r"[/\\][Pp]ython(\d)\.?(\d{1,2})[/\\](?:site|dist)-packages[/\\]")
# A CUDA library whose soname carries the CUDA major, named missing or needed by a compiled
# package ("…/site-packages/vllm/_C.abi3.so: libcudart.so.13: cannot open shared object file",
# "nixl_ep linked against libcudart.so.12", "libcudart.so.13 required").
CUDA_NEED = lazy(r"(?P<lib>lib(?:cudart|cublas|cublasLt|nvrtc|nvJitLink)\.so\.1\d)(?:\.\d{1,3})?\b")
NEED_WORDS = ("cannot open shared object", "required", "not found", "linked against", "needs ", "No such file")
NEED_OWNER = lazy(r"(?:site|dist)-packages[/\\](?P<pkg>[A-Za-z_]\w{0,60})[/\\]|\b(?P<named>[A-Za-z_][\w-]{1,60}) (?:is )?linked against")
MAX_BLOCK = 200  # lines of one traceback kept; a longer one keeps its head and tail
MAX_ERRORS = 50


def _prefix_of(line: str) -> str:
    return line[: line.find(TRACEBACK)]


def _strip(line: str, prefix: str) -> str:
    return line[len(prefix) :] if prefix and line.startswith(prefix) else line


def _traceback_end(lines: list[str], start: int, prefix: str) -> tuple[int, bool]:
    """(index after the block, whether it reached the exception line). The frames are indented;
    the first unindented line after them is the exception, whose message may go on for a few
    lines up to a blank line."""
    i = start + 1
    while i < len(lines) and i - start < 10 * MAX_BLOCK:
        s = _strip(lines[i], prefix)
        if TRACEBACK in s:
            return i, False
        if s.startswith((" ", "\t", "During handling", "The above exception")) or (not s.strip() and _indented_next(lines, i, prefix)):
            i += 1
            continue
        if not s.strip():
            return i, False
        i += 1
        while i < len(lines) and i - start < 10 * MAX_BLOCK and _strip(lines[i], prefix).strip() and TRACEBACK not in lines[i]:
            i += 1
        return i, True
    return i, False


def _indented_next(lines: list[str], i: int, prefix: str) -> bool:
    return i + 1 < len(lines) and _strip(lines[i + 1], prefix).startswith(("  ", "\t"))


def _block_text(lines: list[str], start: int, end: int, prefix: str) -> str:
    body = [_strip(ln, prefix) for ln in lines[start:end]]
    if len(body) > MAX_BLOCK:
        body = body[: MAX_BLOCK // 2] + ["  [...]"] + body[-MAX_BLOCK // 2 :]
    return "\n".join(body).strip()


def read_tracebacks(lines: list[str], acc: Acc) -> None:
    i = 0
    while i < len(lines) and len(acc.errors) < MAX_ERRORS:
        headless = TRACEBACK not in lines[i] and bool(HEADLESS.match(lines[i]))
        if TRACEBACK not in lines[i] and not headless:
            i += 1
            continue
        prefix = "" if headless else _prefix_of(lines[i])
        end, complete = _traceback_end(lines, i, prefix)
        acc.errors.append(_block_text(lines, i, end, prefix))
        acc.consumed.update(range(i, end))
        acc.kind("traceback")
        if not complete:
            acc.note("a traceback is cut off before its exception line")
            acc.want(text="the whole traceback, down to its last line (the exception)")
        i = max(end, i + 1)


def read_error_lines(lines: list[str], acc: Acc) -> None:
    """Error lines outside tracebacks and tool output; consecutive ones stay one text."""
    block: list[str] = []
    for i, line in enumerate(lines + [""]):
        free = i < len(lines) and i not in acc.consumed and bool(line.strip())
        # an error's message often goes on in indented lines ("    PyTorch 2.1.2+cu121 ... (you have 2.1.2+cpu)")
        if free and (ERRORISH.search(line) or (block and line[:1] in (" ", "\t") and len(block) < 40)):
            block.append(line.strip())
            continue
        if block and len(acc.errors) < MAX_ERRORS:
            acc.errors.append("\n".join(block))
            acc.kind("error_line")
        block = []


def read_error_facts(lines: list[str], acc: Acc) -> None:
    """What errors state outright: torch's "driver ... too old (found version 11040)" is the
    driver's CUDA version; a site-packages path names the Python."""
    for text in acc.errors:
        m = FOUND_VERSION.search(text)
        if m:
            n = int(m.group(1))
            line = next((ln for ln in text.splitlines() if m.group(0) in ln), m.group(0))
            acc.put("driver", "cuda_version", f"{n // 1000}.{n % 1000 // 10}", line, RANK_ERROR)
            acc.put("driver", "cuda_version_source", f"torch's message (found version {n})", line, RANK_ERROR)
            if "UserWarning" in text or "Warning" in text:
                acc.warnings.append(line.strip()[:1000])
        m = SITE_PY.search(text)
        if m:
            acc.put(
                "python",
                "version",
                f"{m.group(1)}.{m.group(2)}",
                next((ln for ln in text.splitlines() if m.group(0) in ln), ""),
                RANK_ERROR,
            )


def read_cuda_needs(lines: list[str], acc: Acc) -> None:
    """CUDA runtime libraries a line says a package needs or misses, with the package when the
    line names it (a site-packages path, "X linked against"); torch's own are not a package's."""
    for line in lines:
        if ".so.1" not in line or not any(w in line for w in NEED_WORDS) or len(acc.cuda_needs) >= MAX_ERRORS:
            continue
        m = CUDA_NEED.search(line)
        if not m:
            continue
        o = NEED_OWNER.search(line)
        owner = (o.group("pkg") or o.group("named")) if o else ""
        if owner.lower() not in ("torch", "nvidia", "lib"):
            acc.cuda_needs.append((owner, m.group("lib")))


def read_errors(lines: list[str], acc: Acc) -> None:
    read_tracebacks(lines, acc)
    read_error_lines(lines, acc)
    read_error_facts(lines, acc)
    read_cuda_needs(lines, acc)
