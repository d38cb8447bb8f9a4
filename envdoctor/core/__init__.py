"""The engine core: check API, facts, registry, runner, probes, report model, run plan."""
