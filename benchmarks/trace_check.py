"""envdoctor check with a timeline of probe workers, probe calls and checks (stderr: TRACE lines)."""
import sys, time
T0 = time.monotonic()
def say(s): sys.stderr.write(f"TRACE {s}\n"); sys.stderr.flush()
from envdoctor.core import probe, runner
orig_req = probe.ProbeClient._request_answer
def req(self, worker, offset, timeout, what):
    s = time.monotonic()
    try:
        return orig_req(self, worker, offset, timeout, what)
    finally:
        say(f"call  {s-T0:6.2f} -> {time.monotonic()-T0:6.2f}  pid {worker.proc.pid} {what}")
probe.ProbeClient._request_answer = req
orig_start = probe.ProbeClient._start_worker
def start(self, env, what, root=None):
    s = time.monotonic(); w = orig_start(self, env, what, root=root)
    say(f"spawn {s-T0:6.2f} -> {time.monotonic()-T0:6.2f}  pid {w.proc.pid} for {what}"); return w
probe.ProbeClient._start_worker = start
orig_eval = runner.evaluate
def ev(spec, store, **kw):
    s = time.monotonic(); out = orig_eval(spec, store, **kw)
    say(f"check {s-T0:6.2f} -> {time.monotonic()-T0:6.2f}  {spec.id} {out.status if hasattr(out,'status') else ''}"); return out
runner.evaluate = ev
from envdoctor.cli import main
say(f"imported {time.monotonic()-T0:.2f}")
try:
    main(sys.argv[1:])
finally:
    say(f"end {time.monotonic()-T0:.2f}")
