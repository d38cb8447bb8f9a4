"""Just enough ELF reading to tell which shared objects link torch, without loading them.

Reads the program headers and the dynamic section (``DT_NEEDED``) or, for the symbol check, the
dynamic symbol table. Only headers and the few tables named are read, never the code, so a
scan of every ``.so`` an environment ships stays fast; no dependency beyond ``struct``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB = 0, 1, 5
SHT_DYNSYM = 11
SHN_UNDEF = 0
STB_WEAK = 2
MAX_TABLE = 64 << 20  # a larger table than this is not a plausible ELF header field


@dataclass(frozen=True)
class _Layout:
    endian: str
    wide: bool  # ELFCLASS64

    def unpack(self, fmt: str, data: bytes, offset: int = 0) -> tuple:
        return struct.unpack_from(self.endian + fmt, data, offset)


def _layout(head: bytes) -> _Layout | None:
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
        return None
    return _Layout("<" if head[5] == 1 else ">", head[4] == 2)


def _read(f, offset: int, size: int) -> bytes:
    if size < 0 or size > MAX_TABLE:
        raise ValueError("implausible table size")
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise ValueError("truncated")
    return data


def _program_headers(f, lay: _Layout, head: bytes) -> list[tuple[int, int, int, int]]:
    """(type, offset, vaddr, filesz) of each program header."""
    if lay.wide:
        (phoff,) = lay.unpack("Q", head, 32)
        phentsize, phnum = lay.unpack("HH", head, 54)
        fmt, fields = "IIQQQQQQ", (0, 2, 3, 5)
    else:
        (phoff,) = lay.unpack("I", head, 28)
        phentsize, phnum = lay.unpack("HH", head, 42)
        fmt, fields = "IIIIIIII", (0, 1, 2, 4)
    table = _read(f, phoff, phentsize * phnum)
    out = []
    for i in range(phnum):
        row = lay.unpack(fmt, table, i * phentsize)
        out.append(tuple(row[k] for k in fields))
    return out


def _cstr(f, offset: int, limit: int = 4096) -> str:
    f.seek(offset)
    raw = f.read(limit)
    return raw.partition(b"\0")[0].decode("utf-8", "replace")


def needed(path: str) -> list[str] | None:
    """The ``DT_NEEDED`` entries of an ELF shared object, or None when it is not one (or unreadable)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            lay = _layout(head)
            if lay is None:
                return None
            phdrs = _program_headers(f, lay, head)
            dyn = next((p for p in phdrs if p[0] == PT_DYNAMIC), None)
            if dyn is None:
                return []
            data = _read(f, dyn[1], dyn[3])
            fmt, size = ("qQ", 16) if lay.wide else ("iI", 8)
            entries = [lay.unpack(fmt, data, i) for i in range(0, len(data) - size + 1, size)]
            strtab = next((v for tag, v in entries if tag == DT_STRTAB), None)
            names = []
            for tag, value in entries:
                if tag == DT_NULL:
                    break
                if tag == DT_NEEDED and strtab is not None:
                    names.append(_cstr(f, _file_offset(phdrs, strtab) + value))
            return names
    except (OSError, ValueError, struct.error):
        return None


def _file_offset(phdrs, vaddr: int) -> int:
    """Where the byte loaded at ``vaddr`` lies in the file (DT_STRTAB holds an address)."""
    for ptype, offset, start, filesz in phdrs:
        if ptype == PT_LOAD and start <= vaddr < start + filesz:
            return vaddr - start + offset
    raise ValueError("address outside every loaded segment")


def undefined_symbols(path: str) -> list[str]:
    """The strong undefined symbols of the dynamic symbol table: what the object needs from others."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            lay = _layout(head)
            if lay is None:
                return []
            if lay.wide:
                (shoff,) = lay.unpack("Q", head, 40)
                shentsize, shnum = lay.unpack("HH", head, 58)
                shfmt, symfmt, symsize = "IIQQQQIIQQ", "IBBHQQ", 24
            else:
                (shoff,) = lay.unpack("I", head, 32)
                shentsize, shnum = lay.unpack("HH", head, 46)
                shfmt, symfmt, symsize = "IIIIIIIIII", "IIIBBH", 16
            table = _read(f, shoff, shentsize * shnum)
            sections = [lay.unpack(shfmt, table, i * shentsize) for i in range(shnum)]
            dynsym = next((s for s in sections if s[1] == SHT_DYNSYM), None)
            if dynsym is None:
                return []
            strsec = sections[dynsym[6]]
            syms = _read(f, dynsym[4], dynsym[5])
            strings = _read(f, strsec[4], strsec[5])
            out = []
            for i in range(0, len(syms) - symsize + 1, symsize):
                row = lay.unpack(symfmt, syms, i)
                name_off, info, shndx = (row[0], row[1], row[3]) if lay.wide else (row[0], row[3], row[5])
                if shndx == SHN_UNDEF and name_off and (info >> 4) != STB_WEAK:
                    out.append(strings[name_off : strings.index(b"\0", name_off)].decode("utf-8", "replace"))
            return out
    except (OSError, ValueError, struct.error, IndexError):
        return []


def links_torch(needed_libs: list[str]) -> list[str]:
    """The torch libraries (libtorch*, libc10*) among an object's ``DT_NEEDED`` entries."""
    return [n for n in needed_libs if n.startswith(("libtorch", "libc10"))]
