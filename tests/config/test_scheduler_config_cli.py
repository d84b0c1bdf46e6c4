"""KubeSchedulerConfiguration through ``berth simulate --scheduler-config``: strict decoding, the older
versions read with kube-scheduler's deprecation notice, and NodePreferAvoidPods out of the defaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from berth.cli import app
from berth.scheduler.framework.config import parse_config
from builders import make_node, make_pod

V1 = "kubescheduler.config.k8s.io/v1"
SEED_V1BETA1 = """\
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: "REPLACE_ME_WITH_KUBE_CONFIG_PATH"
profiles:
- schedulerName: default-scheduler
  plugins:
    preFilter:
      enabled:
      - name: CapacityScheduling
    postFilter:
      enabled:
      - name: CapacityScheduling
      disabled:
      - name: "*"
    reserve:
      enabled:
      - name: CapacityScheduling
  pluginConfig:
  - name: CapacityScheduling
    args:
      kubeConfigPath: "REPLACE_ME_WITH_KUBE_CONFIG_PATH"
"""
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RESULTS = "kube-scheduler-simulator.sigs.k8s.io/"


class Outcome:
    """Exit code and output of one ``berth simulate`` run."""

    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    def pod(self, name: str) -> dict[str, Any]:
        """The pod called ``name`` in the JSON output."""
        items = json.loads(self.stdout)["items"]
        return next(o for o in items if o["kind"] == "Pod" and o["metadata"]["name"] == name)


def _simulate(tmp_path: Path, config: str | dict[str, Any], *inputs: str) -> Outcome:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(config if isinstance(config, str) else yaml.safe_dump(config))
    docs = [
        make_node("a").capacity(cpu="4", memory="8Gi").obj(),
        make_node("b").capacity(cpu="8", memory="16Gi").taint("k", "v", "PreferNoSchedule").obj(),
        make_pod("web").req(cpu="1", memory="1Gi").obj(),
    ]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(docs))
    paths = list(inputs) or [str(cluster)]
    argv = ["simulate", *paths, "--scheduler-config", str(cfg), "--until", "10s", "-o", "json"]
    result = CliRunner().invoke(app, argv)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Outcome(result.exit_code, result.stdout, result.stderr)


def _config(version: str = V1, **profile: Any) -> dict[str, Any]:
    return {
        "apiVersion": version,
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", **profile}],
    }


def _with_results(version: str = V1, **points: Any) -> dict[str, Any]:
    """A default profile that also writes the simulator's result annotations."""
    points.setdefault("multiPoint", {}).setdefault("enabled", []).append({"name": "SchedulingResults"})
    return _config(version, plugins=points)


# ----- strict decoding --------------------------------------------------------------------------------------


def test_unknown_fields_are_refused_naming_the_file_once(tmp_path: Path) -> None:
    config = _config(plugin={"score": {"enabled": [{"name": "ImageLocality"}]}})
    config["percentageOfNodeToScore"] = 50
    run = _simulate(tmp_path, config)
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == (
        f"error: {tmp_path / 'sched.yaml'}: strict decoding error: "
        'unknown field "percentageOfNodeToScore" (did you mean "percentageOfNodesToScore"?), '
        'unknown field "profiles[0].plugin" (did you mean "plugins"?)\n'
    )


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        (
            {"plugins": {"score": {"enabled": [{"name": "ImageLocality", "wieght": 2}]}}},
            'strict decoding error: unknown field "profiles[0].plugins.score.enabled[0].wieght" '
            '(did you mean "weight"?)',
        ),
        (  # field names are case-sensitive, as sigs.k8s.io/json's strict mode
            {"PercentageOfNodesToScore": 10},
            'strict decoding error: unknown field "profiles[0].PercentageOfNodesToScore" '
            '(did you mean "percentageOfNodesToScore"?)',
        ),
        (
            {
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrateg": {"type": "MostAllocated"}}}
                ]
            },
            "decoding args for plugin NodeResourcesFit: strict decoding error: "
            'unknown field "scoringStrateg" (did you mean "scoringStrategy"?)',
        ),
        (
            {"pluginConfig": [{"name": "NodeResourcesFit", "arg": {}}]},
            'strict decoding error: unknown field "profiles[0].pluginConfig[0].arg" (did you mean "args"?)',
        ),
    ],
)
def test_misspelled_profile_fields_exit_2(tmp_path: Path, profile: dict[str, Any], message: str) -> None:
    run = _simulate(tmp_path, _config(**profile))
    assert (run.code, run.stderr) == (2, f"error: {tmp_path / 'sched.yaml'}: {message}\n")


def test_multipoint_is_unknown_before_v1beta3(tmp_path: Path) -> None:
    config = _config("kubescheduler.config.k8s.io/v1beta2", plugins={"multiPoint": {"enabled": []}})
    run = _simulate(tmp_path, config)
    assert run.code == 2
    assert run.stderr.endswith('strict decoding error: unknown field "profiles[0].plugins.multiPoint"\n')


def test_descheduler_policy_unknown_field(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "descheduler/v1alpha2",
                "kind": "DeschedulerPolicy",
                "maxNoOfPodsToEvictPerNod": 3,
                "profiles": [],
            }
        )
    )
    cfg = _config()
    run = _simulate(tmp_path, cfg, str(EXAMPLES / "quickstart"), "--descheduler-policy", str(policy))
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == (
        f'error: {policy}: DeschedulerPolicy: strict decoding error: unknown field "maxNoOfPodsToEvictPerNod" '
        '(did you mean "maxNoOfPodsToEvictPerNode"?)\n'
    )


# ----- versions ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "notice"),
    [
        ("v1beta3", "KubeSchedulerConfiguration v1beta3 is deprecated in v1.26, will be removed in v1.29"),
        ("v1beta2", "KubeSchedulerConfiguration v1beta2 is deprecated in v1.25, will be removed in v1.28"),
        ("v1beta1", "KubeSchedulerConfiguration v1beta1 is deprecated in v1.22, will be removed in v1.23"),
    ],
)
def test_older_versions_run_with_kubes_deprecation_notice(tmp_path: Path, version: str, notice: str) -> None:
    run = _simulate(tmp_path, _config(f"kubescheduler.config.k8s.io/{version}"))
    assert run.code == 0, run.stderr
    assert run.stderr == f"warning: {tmp_path / 'sched.yaml'}: {notice}\n"
    assert run.pod("web")["spec"]["nodeName"] == "a"


def _explained_weights(tmp_path: Path, version: str) -> dict[str, int]:
    cfg = tmp_path / f"{version}.yaml"
    cfg.write_text(yaml.safe_dump(_config(f"kubescheduler.config.k8s.io/{version}")))
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        yaml.safe_dump_all([make_node("a").obj(), make_node("b").obj(), make_pod("web").req(cpu="1").obj()])
    )
    argv = ["explain", str(cluster), "--pod", "web", "-o", "json", "--scheduler-config", str(cfg)]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.stderr
    (attempt,) = json.loads(result.stdout)
    return {p["name"]: p["weight"] for p in attempt["scorePlugins"]}


def test_older_versions_keep_their_default_weights(tmp_path: Path) -> None:
    """v1beta3 raised TaintToleration to 3 and NodeAffinity, InterPodAffinity to 2; v1beta2 and v1beta1 weigh
    every default score plugin 1 but PodTopologySpread 2 (explain lists the plugins that scored this pod)."""
    v1 = _explained_weights(tmp_path, "v1")
    assert v1 == {
        "TaintToleration": 3,
        "NodeResourcesFit": 1,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert _explained_weights(tmp_path, "v1beta3") == v1
    old = {**v1, "TaintToleration": 1}
    assert _explained_weights(tmp_path, "v1beta2") == old
    assert _explained_weights(tmp_path, "v1beta1") == old
    profile = parse_config(_config("kubescheduler.config.k8s.io/v1beta2")).profiles[0]
    weights = {r.name: r.weight for r in profile.plugins["multiPoint"].enabled if r.weight}
    assert weights == {
        "TaintToleration": 1,
        "NodeAffinity": 1,
        "NodeResourcesFit": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 1,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
        "Reservation": 5000,
    }


def test_the_seeds_v1beta1_capacity_scheduling_config_runs_as_the_v1_one(tmp_path: Path) -> None:
    example = str(EXAMPLES / "elasticquota")
    seed = _simulate(tmp_path, SEED_V1BETA1, example)
    assert seed.code == 0, seed.stderr
    assert seed.stderr == (
        f"warning: {tmp_path / 'sched.yaml'}: "
        "KubeSchedulerConfiguration v1beta1 is deprecated in v1.22, will be removed in v1.23\n"
    )
    v1 = _simulate(tmp_path, (EXAMPLES / "elasticquota-scheduler-config.yaml").read_text(), example)
    assert v1.code == 0, v1.stderr
    assert seed.stdout == v1.stdout


def test_v1beta1_plugins_removed_in_v1beta2_are_refused(tmp_path: Path) -> None:
    config = _config(
        "kubescheduler.config.k8s.io/v1beta1",
        plugins={"score": {"enabled": [{"name": "NodeResourcesLeastAllocated", "weight": 1}]}},
    )
    run = _simulate(tmp_path, config)
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == (
        f"error: {tmp_path / 'sched.yaml'}: profiles[0].plugins.score.enabled[0].name: Invalid value: "
        '"NodeResourcesLeastAllocated": removed in kubescheduler.config.k8s.io/v1beta2, cannot be converted; '
        'use NodeResourcesFit with scoringStrategy type "LeastAllocated"\n'
    )


def test_an_unread_version_names_the_file_once_and_the_versions_read(tmp_path: Path) -> None:
    run = _simulate(tmp_path, _config("kubescheduler.config.k8s.io/v1alpha1"))
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == (
        f"error: {tmp_path / 'sched.yaml'}: apiVersion/kind: Unsupported value: "
        '"kubescheduler.config.k8s.io/v1alpha1/KubeSchedulerConfiguration": supported values: '
        '"kubescheduler.config.k8s.io/v1/KubeSchedulerConfiguration", '
        '"kubescheduler.config.k8s.io/v1beta3/KubeSchedulerConfiguration", '
        '"kubescheduler.config.k8s.io/v1beta2/KubeSchedulerConfiguration", '
        '"kubescheduler.config.k8s.io/v1beta1/KubeSchedulerConfiguration"\n'
    )


# ----- NodePreferAvoidPods ----------------------------------------------------------------------------------


def test_node_prefer_avoid_pods_is_not_a_default_plugin() -> None:
    for doc in (None, _config()):
        names = [r.name for r in parse_config(doc).profiles[0].plugins["multiPoint"].enabled]
        assert "NodePreferAvoidPods" not in names


def test_final_scores_equal_kube_schedulers_and_the_plugin_can_still_be_enabled(tmp_path: Path) -> None:
    run = _simulate(tmp_path, _with_results())
    assert run.code == 0, run.stderr
    final = json.loads(run.pod("web")["metadata"]["annotations"][RESULTS + "finalscore-result"])
    assert "NodePreferAvoidPods" not in final["a"]
    enabled = _with_results(score={"enabled": [{"name": "NodePreferAvoidPods", "weight": 10000}]})
    run = _simulate(tmp_path, enabled)
    assert run.code == 0, run.stderr
    with_plugin = json.loads(run.pod("web")["metadata"]["annotations"][RESULTS + "finalscore-result"])
    # the plugin adds exactly its share (100 * 10000 on nodes that do not avoid the pod) and nothing else
    for node in ("a", "b"):
        assert with_plugin[node].pop("NodePreferAvoidPods") == "1000000"
    assert with_plugin == final
