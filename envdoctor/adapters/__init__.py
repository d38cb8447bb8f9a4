"""Adapters: envdoctor as other systems' node checks (Slurm's HealthCheckProgram and Prolog,
node-problem-detector's custom plugin). Each runs ``envdoctor check`` in a child with a deadline
and turns its report into that system's contract; "could not judge" (an ``error`` row, a run
that timed out or died) never counts as a problem of the node."""
