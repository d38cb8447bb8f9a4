"""envdoctor's built-in checks, installed as ``envdoctor_checks`` (or loaded from this folder in a checkout)
by the engine's static list (envdoctor.core.builtins). Each public module is one area."""
