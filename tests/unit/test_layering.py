"""The domain (api/core and the context packages) and models import no web framework (docs/architecture.md#layout); the API
imports nothing of the portal that mounts it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = {"fastapi", "starlette", "reflex", "uvicorn", "granian"}
CONTEXTS = sorted(
    {p.parent.name for p in (ROOT / "api").glob("*/__init__.py")} - {"cli", "routes", "wall"}
)
LAYERS = [f"api/{c}" for c in CONTEXTS] + ["models"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_imports_no_web_framework(layer):
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imports(path) & FRAMEWORKS)
        for path in (ROOT / layer).rglob("*.py")
        if _imports(path) & FRAMEWORKS
    }
    assert offenders == {}


def test_models_import_nothing_from_api():
    offenders = [p.name for p in (ROOT / "models").rglob("*.py") if "api" in _imports(p)]
    assert offenders == []


def test_api_imports_nothing_from_the_portal():
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "api").rglob("*.py")
        if "portal" in _imports(path)
    ]
    assert offenders == []
