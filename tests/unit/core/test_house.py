"""The house rules (docs/architecture.md#the-house-rules): the import contracts hold, migrations
import no domain code, every context says what it owns and has its row in the docs, every
module over 500 lines says why it is one, and every code path the docs cite exists.

The contracts themselves live in pyproject.toml (`[tool.importlinter]`) and `make test` runs
`lint-imports` before the tests; running it here too makes a broken contract fail the test
loop a developer runs, with the linter's own report."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FACES = {"cli", "routes", "wall"}
CONTEXTS = sorted(
    p.parent.name for p in (ROOT / "api").glob("*/__init__.py") if p.parent.name not in FACES
)


def test_import_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def _imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_migrations_import_no_domain_code():
    """A migration must keep doing what it did after the code it would call is moved or
    changed: it may use api/core's crypto and key check (to reseal secrets), nothing else."""
    offenders = {
        path.name: sorted(m for m in _imported(path) if m.split(".")[0] in {"api", "portal"})
        for path in sorted((ROOT / "alembic" / "versions").glob("*.py"))
    }
    offenders = {
        name: [m for m in mods if not m.startswith("api.core.")] for name, mods in offenders.items()
    }
    assert {name: mods for name, mods in offenders.items() if mods} == {}


def test_every_context_says_what_it_owns():
    silent = [
        c
        for c in CONTEXTS
        if not ast.get_docstring(ast.parse((ROOT / "api" / c / "__init__.py").read_text()))
    ]
    assert silent == []


def test_every_context_has_its_row_in_the_architecture_doc():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    rows = set(re.findall(r"^\| `api/([a-z_]+)/` \|", doc, flags=re.MULTILINE))
    assert sorted(set(CONTEXTS) - rows) == [], "each context needs its row in the Layout table"
    assert sorted(rows - set(CONTEXTS) - FACES) == [], "a row names a context that is gone"


CODE_PATH = re.compile(
    r"(?<![\w/.-])((?:api|portal|models|tests|alembic|bench|scripts|assets)/[\w./-]*[\w/])"
)


def test_every_code_path_the_docs_cite_exists():
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for cited in set(CODE_PATH.findall(doc.read_text())):
            path = cited.split("#")[0].rstrip(".")
            if "*" in path or "<" in path:
                continue
            if not (ROOT / path).exists():
                missing.append(f"{doc.name}: {cited}")
    assert sorted(missing) == []


MAX_LINES = 500
REASON = "Why one module of this size:"


def test_a_long_module_says_why_it_is_one():
    """A module of api/ or models/ over MAX_LINES lines says why its parts belong together,
    in a paragraph of its docstring that starts with REASON; one that cannot is split by
    what each part does."""
    silent = []
    for path in sorted([*(ROOT / "api").rglob("*.py"), *(ROOT / "models").rglob("*.py")]):
        text = path.read_text()
        if len(text.splitlines()) <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        said = [line for line in doc.splitlines() if line.startswith(REASON)]
        if not any(line.removeprefix(REASON).strip() for line in said):
            silent.append(str(path.relative_to(ROOT)))
    assert silent == [], f"over {MAX_LINES} lines, with no paragraph starting {REASON!r}"
