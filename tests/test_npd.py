"""node-problem-detector's custom-plugin contract, held by real processes: exit 0 OK, 1 problem,
2 (unknown) when envdoctor could not judge; one stdout line of at most 80 bytes; a hung check
ends as unknown under the rule's timeout. The shipped monitor config, DaemonSet and pre-flight
Job are validated offline (kubernetes-validate; there is no cluster here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from kubernetes_validate import ValidationError, validate

from envdoctor.core.registry import discover
from envdoctor.core.selection import matches, split_patterns
from tests.conftest import REPO

DEPLOY = REPO / "deploy" / "kubernetes"
PLUGINS = REPO / "tests" / "fleet_plugins"
K8S = "1.30.0"


def npd(marker, *extra: str, timeout: float = 120) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "envdoctor", "npd", "--profile", "build", "--select", "fleetfault", "--checks-path", str(PLUGINS), *extra]
    env = {**os.environ, "ENVDOCTOR_FAULT_FILE": str(marker)}
    return subprocess.run(argv, env=env, capture_output=True, timeout=timeout)


def _line(res: subprocess.CompletedProcess) -> str:
    lines = res.stdout.splitlines()
    assert len(lines) == 1, res.stdout
    assert len(lines[0]) <= 80, (len(lines[0]), lines[0])
    return lines[0].decode("utf-8")  # never cut inside a character


@pytest.mark.slow
def test_ok_is_exit_0_and_one_short_line(tmp_path):
    res = npd(tmp_path / "absent")
    assert res.returncode == 0, res.stderr
    assert _line(res) == "envdoctor: ok (1 passed)"


@pytest.mark.slow
def test_a_problem_is_exit_1_with_check_action_and_message_cut_to_80_bytes(tmp_path):
    marker = tmp_path / "fault"
    marker.write_text("fail:GPU 3: 2 uncorrectable ECC errors — «μ» " + "x" * 200 + "\n", encoding="utf-8")
    res = npd(marker)
    assert res.returncode == 1, res.stderr
    line = _line(res)
    assert line.startswith("fleetfault.marker: reset-gpu: GPU 3: 2 uncorrectable ECC errors — «μ» x") and line.endswith("...")
    assert len(line.encode()) >= 77  # cut near the limit, not far short of it


def test_could_not_judge_is_unknown_not_a_problem(tmp_path):
    marker = tmp_path / "fault"
    marker.write_text("error\n")
    res = npd(marker)
    assert res.returncode == 2, res.stderr
    assert _line(res).startswith("could not judge: fleetfault.marker: check crashed: RuntimeError")


@pytest.mark.slow
def test_a_hung_check_ends_as_unknown_within_the_rule_s_timeout(tmp_path):
    marker = tmp_path / "fault"
    marker.write_text("hang\n")
    rule_timeout = 60  # the shipped rules' timeout; the plugin must answer before NPD kills it
    res = npd(marker, "--timeout", "3", timeout=rule_timeout)  # raises TimeoutExpired if it hangs
    assert res.returncode == 2
    assert _line(res) == "could not judge: fleetfault.marker: did not finish within the run's --timeout"


def test_a_usage_error_is_unknown_with_one_line(tmp_path):
    res = npd(tmp_path / "absent", "--select", "nosuchcheck")
    assert res.returncode == 2
    assert _line(res).startswith("could not judge: envdoctor: no report")


# ---- the shipped configuration ----------------------------------------------------------------


def monitor() -> dict:
    return json.loads((DEPLOY / "envdoctor-monitor.json").read_text())


def _duration(text: str) -> float:
    assert text.endswith("s"), text
    return float(text[:-1])


def test_the_monitor_has_one_rule_per_condition_each_under_its_timeout():
    m = monitor()
    assert m["plugin"] == "custom" and m["pluginConfig"]["max_output_length"] == 80
    conditions = [c["type"] for c in m["conditions"]]
    rules = m["rules"]
    assert sorted(r["condition"] for r in rules) == sorted(conditions)  # one rule per condition, each declared
    specs = discover(()).checks
    for r in rules:
        assert r["type"] == "permanent" and r["args"][0] == "npd"
        args = r["args"]
        own = float(args[args.index("--timeout") + 1])
        # envdoctor's own deadline plus the kill grace stays under the rule's timeout
        assert own + 5 < _duration(r.get("timeout") or m["pluginConfig"]["timeout"]), r
        chosen = set()
        for pattern in split_patterns([args[args.index("--select") + 1]]):
            hits = {s.id for s in specs if matches(s, pattern)}
            assert hits, f"{r['condition']}: {pattern!r} selects no check"
            chosen |= hits
        # every few minutes on every node: nothing that imports torch or compiles
        assert not {c for c in chosen if c.startswith(("smoke.", "torch.", "compile."))}, (r["condition"], chosen)


def _documents(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


@pytest.mark.parametrize("name", ["node-problem-detector.yaml", "preflight-job.yaml"])
def test_the_manifests_validate_offline(name):
    for doc in _documents(name):
        validate(doc, K8S, strict=True)


def test_validation_rejects_a_broken_manifest():
    ds = next(d for d in _documents("node-problem-detector.yaml") if d["kind"] == "DaemonSet")
    ds["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] = 7
    with pytest.raises(ValidationError):
        validate(ds, K8S, strict=True)


def test_the_daemonset_runs_the_monitor_on_gpu_nodes_and_tolerates_its_taint():
    ds = next(d for d in _documents("node-problem-detector.yaml") if d["kind"] == "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert {"operator": "Exists"} in pod["tolerations"]
    args = pod["containers"][0]["args"]
    assert "--config.custom-plugin-monitor=/config/envdoctor-monitor.json" in args
    kustom = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assert kustom["configMapGenerator"][0]["files"] == ["envdoctor-monitor.json"]
    assert pod["volumes"][0]["configMap"]["name"] == kustom["configMapGenerator"][0]["name"]
