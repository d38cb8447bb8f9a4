#!/bin/bash
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee $OUT/e.log) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl && export PYTHONPATH=/tmp/site && python3 -m pip install -q --no-deps --no-build-isolation . || exit 1
SP=$(python3 -c "import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))")
echo "site-packages $SP"; mount | grep -E " / | /opt" | head; df -h $SP | tail -1
echo "pyc in torch/_dynamo: $(find $SP/torch/_dynamo -name '*.pyc' | wc -l) py: $(find $SP/torch/_dynamo -name '*.py' | wc -l)"
ls -la $SP/torch/_dynamo/__pycache__ | head -5
python3 -c "import sys; print(sys.flags, sys.dont_write_bytecode, sys.pycache_prefix)"; env | grep -i -E "^PYTHON|^TORCH|^TRITON|^CUDA" 
for i in 1 2; do d=$(mktemp -d); export TRITON_CACHE_DIR=$d/t TORCHINDUCTOR_CACHE_DIR=$d/i
  s=$(date +%s%N); python3 -X importtime -c "import torch; import torch._dynamo; import torch._inductor.compile_fx" 2> $OUT/imp$i.txt; echo "[importtime run $i: $(( ($(date +%s%N) - s) / 1000000 )) ms]"; done
python3 - <<'PY'
import re, collections
rows=[]
for line in open("/root/out/imp2.txt" if False else __import__("os").environ["OUT"]+"/imp2.txt"):
    m=re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
    if m: rows.append((int(m[1]), int(m[2]), len(m[3]), m[4]))
print("total self s:", sum(r[0] for r in rows)/1e6, "modules:", len(rows))
print("top self:"); [print(f"  {r[0]/1e6:6.3f} {r[3]}") for r in sorted(rows, reverse=True)[:25]]
print("top cumulative (depth<=2):"); [print(f"  {r[1]/1e6:6.3f} {' '*r[2]}{r[3]}") for r in sorted([r for r in rows if r[2]<=3], key=lambda r:-r[1])[:30]]
pk=collections.Counter()
for r in rows: pk[r[3].split('.')[0]]+=r[0]
print("self by top package:", [(k, round(v/1e6,2)) for k,v in pk.most_common(12)])
PY
echo "== strace-ish: time of subprocesses during dynamo import"
d=$(mktemp -d); TRITON_CACHE_DIR=$d/t TORCHINDUCTOR_CACHE_DIR=$d/i python3 - <<'PY'
import time, subprocess, os
orig = subprocess.Popen.__init__
def po(self, *a, **k):
    s = time.perf_counter(); orig(self, *a, **k); print("  Popen", a[0] if a else k.get("args"), flush=True)
subprocess.Popen.__init__ = po
t=time.perf_counter(); import torch; print("torch", round(time.perf_counter()-t,2))
t=time.perf_counter(); import torch._dynamo; print("dynamo", round(time.perf_counter()-t,2))
t=time.perf_counter(); import torch._inductor.compile_fx; print("inductor", round(time.perf_counter()-t,2))
os._exit(0)
PY
echo "== cProfile of dynamo import (cumulative top 30)"
python3 -c "import torch, cProfile, pstats; cProfile.run('import torch._dynamo', '/tmp/p.out'); pstats.Stats('/tmp/p.out').sort_stats('tottime').print_stats(30)" 2>&1 | tail -45
echo "== done"
