"""The commands (check, list, diff, fleet, bench): thin, each reading the plan and the report model."""
