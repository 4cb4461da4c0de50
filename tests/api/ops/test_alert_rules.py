"""deploy/: the alert rules pass `promtool check` and their own unit tests, each alert has
a case where it fires and one where it does not, each runbook is a heading of
docs/operations.md, and the rules and the Grafana dashboard name only metrics that api/ops
defines and routes the API has (they cannot drift from the code)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from fastapi.routing import iter_route_contexts
from prometheus_client import REGISTRY

from api.app import create_api
from api.ops import OutboxCollector
from tests.factories import FixedCountries
from tests.live import ROOT

PROMETHEUS = ROOT / "deploy" / "prometheus"
DASHBOARD = ROOT / "deploy" / "grafana" / "questwall.json"
OPERATIONS = ROOT / "docs" / "operations.md"
METRIC = re.compile(r"\bquestwall_[a-z0-9_]+")
ROUTE = re.compile(r'\broute=~?"([^"]+)"')


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is missing: `make install-dev` installs Debian's prometheus"
    return found


def run_promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), *args], cwd=PROMETHEUS, capture_output=True, text=True, timeout=120
    )


def rules() -> list[dict[str, Any]]:
    document = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
    return [rule for group in document["groups"] for rule in group["rules"]]


def dashboard_panels(panels: list[dict[str, Any]] | None = None) -> Iterator[dict[str, Any]]:
    if panels is None:
        panels = json.loads(DASHBOARD.read_text())["panels"]
    for panel in panels:
        yield panel
        yield from dashboard_panels(panel.get("panels", []))


def dashboard_exprs() -> list[str]:
    return [t["expr"] for p in dashboard_panels() for t in p.get("targets", [])]


def test_promtool_checks_the_rules_and_the_example_configuration():
    for args in (("check", "rules", "alerts.yml"), ("check", "config", "prometheus.yml")):
        checked = run_promtool(*args)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_rules_pass_their_unit_tests():
    tested = run_promtool("test", "rules", "alerts_test.yml")
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_alert_has_a_firing_and_a_quiet_case():
    document = yaml.safe_load((PROMETHEUS / "alerts_test.yml").read_text())
    firing: set[str] = set()
    quiet: set[str] = set()
    for test in document["tests"]:
        for case in test.get("alert_rule_test", []):
            (firing if case.get("exp_alerts") else quiet).add(case["alertname"])
    alerts = {rule["alert"] for rule in rules()}
    assert alerts - firing == set(), "alerts never seen firing"
    assert alerts - quiet == set(), "alerts never seen quiet"
    assert firing | quiet <= alerts


def _slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading (GitHub's rule)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_alert_is_labelled_annotated_and_has_its_runbook():
    headings = re.findall(r"^#+ (.+)$", OPERATIONS.read_text(), re.MULTILINE)
    anchors = {_slug(h) for h in headings}
    for rule in rules():
        assert rule["labels"]["severity"] in ("page", "ticket"), rule["alert"]
        annotations = rule["annotations"]
        assert annotations["summary"] and annotations["description"], rule["alert"]
        page, _, anchor = annotations["runbook"].partition("#")
        assert page == "docs/operations.md" and anchor in anchors, rule["alert"]
        assert anchor == rule["alert"].lower()


def defined_names(engine) -> set[str]:
    """Every sample name api/ops can expose (a counter's `_total`, a histogram's
    `_bucket`, `_count` and `_sum`, ...)."""
    suffixes = {
        "counter": ("_total", "_created"),
        "histogram": ("_bucket", "_count", "_sum", "_created"),
        "summary": ("_count", "_sum", "_created"),
        "gauge": ("",),
        "info": ("_info",),
    }
    families = list(REGISTRY.collect()) + list(OutboxCollector(engine).collect())
    return {
        family.name + suffix
        for family in families
        for suffix in suffixes.get(family.type, ("",))
        if family.name.startswith("questwall_")
    }


@pytest.fixture
def routes(engine, api_settings, box) -> set[str]:
    api = create_api(engine=engine, settings=api_settings, box=box, countries=FixedCountries())
    return {c.path for c in iter_route_contexts(api.routes) if isinstance(c.path, str)}


@pytest.mark.parametrize("source", ["alerts.yml", "questwall.json"])
def test_rules_and_dashboard_name_only_what_the_code_exposes(source, routes, engine):
    exprs = [r["expr"] for r in rules()] if source == "alerts.yml" else dashboard_exprs()
    assert exprs
    named = {name for expr in exprs for name in METRIC.findall(expr)}
    unknown = named - defined_names(engine)
    assert unknown == set(), f"{source} names metrics api/ops does not define"
    for expr in exprs:
        for route in ROUTE.findall(expr):
            assert route in routes, f"{source}: {route} is no route of the API"


def test_the_dashboard_asks_its_datasource_variable_and_graphs_every_alerts_metric():
    document = json.loads(DASHBOARD.read_text())
    [variable] = [v for v in document["templating"]["list"] if v["type"] == "datasource"]
    assert variable["query"] == "prometheus"
    panels = [p for p in dashboard_panels() if p["type"] != "row"]
    assert len({p["id"] for p in dashboard_panels()}) == len(list(dashboard_panels()))
    for panel in panels:
        assert panel["datasource"]["uid"] == "${" + variable["name"] + "}", panel["title"]
        assert panel["targets"] and all(t["expr"] for t in panel["targets"]), panel["title"]
    graphed = {n for e in dashboard_exprs() for n in METRIC.findall(e)}
    alerted = {n for r in rules() for n in METRIC.findall(r["expr"])}
    assert alerted <= graphed, "an alert's metric has no panel"
