"""The integration examples in docs/examples run against a real API process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.live import ROOT, live_api, node

EXAMPLES = ROOT / "docs" / "examples"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with live_api(tmp_path_factory.mktemp("examples")) as live:
        yield live


def _env(api) -> dict[str, str]:
    return {
        **api.env,
        "QUESTWALL_URL": api.url,
        "QUESTWALL_GAME_ID": api.game["gameId"],
        "QUESTWALL_CLIENT_ID": api.game["clientId"],
        "QUESTWALL_CLIENT_SECRET": api.game["clientSecret"],
    }


def test_python_example_sends_a_signed_batch(api):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "send_events.py")],
        env=_env(api),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("200 OK {'identifiers': 1, 'events': 2} []")


def test_node_example_sends_a_signed_batch(api):
    result = subprocess.run(
        [node(), str(EXAMPLES / "send_events.mjs")],
        env=_env(api),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '200 OK {"identifiers":1,"events":2} []'


def test_readme_curl_example_is_accepted(api):
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```bash\nCLIENT_ID=", 1)[1].split("```", 1)[0]
    script = "CLIENT_ID=" + block
    script = script.replace("CLIENT_ID=qw_ci_…; SECRET=qw_cs_…; GAME_ID=…", "")
    script = script.replace("http://localhost:8000", api.url)
    env = {
        **_env(api),
        "CLIENT_ID": api.game["clientId"],
        "SECRET": api.game["clientSecret"],
        "GAME_ID": api.game["gameId"],
    }
    result = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert '"message":"OK"' in result.stdout, result.stdout + result.stderr
