"""Timeline of the smoke bodies in one process (fresh caches set by the caller)."""
import os, sys, time
T0 = time.perf_counter()
last = [T0]
def mark(s):
    now = time.perf_counter()
    print(f"{now-T0:7.2f}s (+{now-last[0]:5.2f}) {s}", flush=True)
    last[0] = now
import torch; mark("import torch")
order = sys.argv[1].split(",") if len(sys.argv) > 1 else ["cuda", "matmul", "triton", "dynamo", "inductor", "function", "module", "cudagraphs", "amp"]
from envdoctor_checks.bodies import smoke
import io, contextlib
for step in order:
    with contextlib.redirect_stdout(io.StringIO()):
        if step == "cuda": torch.zeros(1, device="cuda"); torch.cuda.synchronize()
        elif step == "matmul": smoke.matmul()
        elif step == "triton": smoke.triton_add()
        elif step == "dynamo": import torch._dynamo
        elif step == "inductor": import torch._inductor.compile_fx
        elif step == "function": smoke.compile_smoke(parts=["function"])
        elif step == "module": smoke.compile_smoke(parts=["module"])
        elif step == "both": smoke.compile_smoke(parts=["function", "module"])
        elif step == "cudagraphs": smoke.cudagraphs()
        elif step == "amp": smoke.amp_compile()
        elif step == "addcompile":
            f = torch.compile(lambda a, b: a + b); a = torch.randn(16, device="cuda"); f(a, a); torch.cuda.synchronize()
    mark(step)
os._exit(0)
