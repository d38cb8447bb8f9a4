"""envdoctor's built-in checks, installed as ``envdoctor_checks`` and loaded through the same
``envdoctor.checks`` entry point as any third-party plugin. Each public module is one area."""
