#!/usr/bin/env bash
# Fault-injection kit for the GPU verification scripts: inject and undo real faults on a
# throwaway GPU machine where you are root, to prove envdoctor's diagnoses. Based on the
# project's shared tool (shared/tools/gpu-faults.sh); the scripts in verification/scripts/
# source this copy themselves, so nothing else is needed. By hand:
#   . verification/faults.sh
#   fault_python_h on;  envdoctor check --select toolchain.python_h;  fault_python_h off
# Each fault prints what it did. Environment-only faults need no function: prefix the command,
# e.g. CUDA_VISIBLE_DEVICES= envdoctor check.
# Needs root for most faults (it moves files of the interpreter and of installed packages, and
# mounts tmpfs); do not use it on a machine you care about.

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  echo "source me: . ${0}   (then call fault_* functions; see the comments in this file)" >&2
  exit 2
fi

# Assertions shared by every script: `expect` runs a command, shows its output and counts a
# failure unless it exits as wanted and prints a line matching the pattern; `finish` prints the
# count and exits 1 when anything failed, so a rerun answers pass/fail. `saw PATTERN` asserts more
# of the last expect's output.
fails=0
expect() {  # expect NAME WANT_RC PATTERN -- COMMAND...   (WANT_RC '*': any exit; PATTERN: grep -E)
  local name=$1 want=$2 pat=$3 out rc; shift 4
  out=$("$@" 2>&1); rc=$?; EXPECT_OUT=$out  # the output, for further asserts on it
  echo; echo "=== $name: $* ==="; printf '%s\n' "$out"; echo "[exit $rc]"
  if { [ "$want" != '*' ] && [ "$rc" != "$want" ]; } || ! grep -qE -- "$pat" <<<"$out"; then
    echo "!! FAIL $name: wanted exit $want and a line matching /$pat/"; fails=$((fails + 1))
  fi
}
assert() {  # assert NAME COMMAND...: count a failure unless COMMAND succeeds
  local name=$1; shift
  if "$@"; then echo "ok: $name"; else echo "!! FAIL $name"; fails=$((fails + 1)); fi
}
want() {  # COMMAND; want RC NAME: count a failure unless the command just run exited RC
  local rc=$?; echo "[exit $rc]"
  if [ "$rc" != "$1" ]; then echo "!! FAIL $2: wanted exit $1, got $rc"; fails=$((fails + 1)); fi
}
saw() {  # saw PATTERN: count a failure unless the last expect's output has a line matching it
  if grep -qE -- "$1" <<<"$EXPECT_OUT"; then echo "ok: saw /$1/"; else echo "!! FAIL: no line matches /$1/"; fails=$((fails + 1)); fi
}
finish() { echo; echo "failures: $fails"; exit $((fails > 0)); }
triaged() {  # triaged NAME CAUSE_ID FILE: `envdoctor triage FILE` names CAUSE_ID first (exit 1)
  expect "$1" 1 "^  \[$2; judged by" -- envdoctor triage "$3"
}
own_paste_is_clean() {  # [NAME]: the machine's collect_env, nvidia-smi, -q and pip list triage to no problem
  { timeout 60 python3 -m torch.utils.collect_env; nvidia-smi; timeout 20 nvidia-smi -q; python3 -m pip list; } > p.txt 2>&1
  local name="the machine's own paste: no problem"
  expect "${1:-$name}" 0 "No environment problem was found in the paste" -- envdoctor triage p.txt
}

_pyinc() { python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])"; }

fault_python_h() {  # on|off: hide the interpreter's Python.h (Triton's launcher build needs it)
  local h; h="$(_pyinc)/Python.h"
  if [ "${1:-}" = on ]; then mv "$h" "$h.hidden" && echo "hid $h"; else mv "$h.hidden" "$h" && echo "restored $h"; fi
}

fault_no_compiler_path() {  # prints a PATH with python and envdoctor but no C/C++ compiler
  local d=/tmp/nocc p x; mkdir -p $d
  for x in sh bash env ldconfig uname cat ls nvidia-smi timeout; do p=$(command -v $x) && ln -sf "$p" $d/$x; done
  p="$(dirname "$(command -v python3)"):$(dirname "$(command -v envdoctor 2>/dev/null || command -v python3)"):$d"
  # python3's own directory may hold a compiler too (python3 in /usr/bin next to gcc): say so.
  for x in gcc g++ cc c++ clang clang++; do
    PATH="$p" command -v $x >/dev/null 2>&1 && echo "fault_no_compiler_path: $x is still on that PATH ($(PATH="$p" command -v $x))" >&2
  done
  echo "$p"
}   # use:  PATH=$(fault_no_compiler_path) CC= CXX= envdoctor check

fault_ro_dir() {  # [off]: prints a directory on a read-only mount (chmod does not stop root; a ro mount does)
  if [ "${1:-}" = off ]; then
    mountpoint -q /tmp/ro && umount /tmp/ro; rmdir /tmp/ro 2>/dev/null; echo "unmounted /tmp/ro"; return
  fi
  mkdir -p /tmp/ro; mountpoint -q /tmp/ro || mount -t tmpfs -o ro,size=1m tmpfs /tmp/ro; echo /tmp/ro/cache
}   # use:  TRITON_CACHE_DIR=$(fault_ro_dir) envdoctor check;  then fault_ro_dir off

fault_small_shm() {  # on|off: shrink /dev/shm to 64 MiB, as Docker's default does; off restores its size
  local saved=/tmp/.fault-shm-size
  if [ "${1:-}" = on ]; then
    [ -f $saved ] || df -k --output=size /dev/shm | tail -1 | tr -d ' ' > $saved
    mount -o remount,size=64M /dev/shm
  else
    mount -o remount,size="$(cat $saved 2>/dev/null || echo $((64 * 1024 * 1024)))k" /dev/shm && rm -f $saved
  fi
  df -h /dev/shm | tail -1
}

fault_triton_version() {  # VERSION|off: make installed triton's dist-info claim another version
  [ -n "${1:-}" ] || { echo "usage: fault_triton_version VERSION|off" >&2; return 2; }
  local m; m="$(python3 -c "import importlib.metadata as m; print(m.distribution('triton')._path)")/METADATA"
  if [ "${1:-}" = off ]; then cp "$m.orig" "$m" && echo "restored $m"; else
    [ -f "$m.orig" ] || cp "$m" "$m.orig"; sed -i "s/^Version: .*/Version: $1/" "$m"; echo "triton dist-info now says $1"; fi
}

fault_torch_xla() {  # VERSION|off: a torch_xla dist-info of the given version beside the real torch
  [ -n "${1:-}" ] || { echo "usage: fault_torch_xla VERSION|off" >&2; return 2; }
  local sp; sp="$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")"
  rm -rf "$sp"/torch_xla-*.dist-info
  [ "${1:-}" = off ] && { echo "removed torch_xla dist-info"; return; }
  mkdir -p "$sp/torch_xla-$1.dist-info"
  printf 'Metadata-Version: 2.1\nName: torch-xla\nVersion: %s\n' "$1" > "$sp/torch_xla-$1.dist-info/METADATA"
  : > "$sp/torch_xla-$1.dist-info/RECORD"; echo pip > "$sp/torch_xla-$1.dist-info/INSTALLER"; echo "torch_xla $1 dist-info added"
}

fault_broken_torch_dir() {  # prints a dir to put first on PYTHONPATH: its torch fails to import
  mkdir -p /tmp/broken-torch/torch
  echo "raise ImportError('libcudnn.so.9: cannot open shared object file: No such file or directory')" > /tmp/broken-torch/torch/__init__.py
  echo /tmp/broken-torch
}   # use:  PYTHONPATH=$(fault_broken_torch_dir) envdoctor check
