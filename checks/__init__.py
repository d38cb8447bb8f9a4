"""envdoctor's built-in checks, installed as ``envdoctor_checks`` (or loaded from this folder in a checkout)
by the engine's static list (envdoctor.core.builtins). Each public module is one area."""

# What the engine needs from the built-ins, declared here (envdoctor.core.builtins reads it): the
# engine names no built-in module or area itself.
PRELOAD = f"{__name__}.bodies.torch_info:preload"  # what a prestarted probe worker runs first (it imports torch)
BENCH_BODY = f"{__name__}.bodies.bench"  # the body `envdoctor bench` runs, one mode per call
# The modules `envdoctor triage` reads from data instead of importing (envdoctor.core.live_index;
# python tools/regen_live_index.py writes it).
LIVE_INDEX = "data/live_index.json"
# The order of the areas in the text report; an area not named here sorts after these, by name.
AREA_ORDER = (
    "system",
    "packages",
    "nvidia",
    "health",
    "torch",
    "triton",
    "toolchain",
    "compile",
    "xla",
    "smoke",
    "perf",
    "expect",
    "distributed",
)
