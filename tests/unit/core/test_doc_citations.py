"""Comments cite the project's own docs by section; every cited section must exist, and no
comment cites a file outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CITATION = re.compile(r"docs/([a-z-]+\.md)#([a-z0-9-]+)")
SOURCES = [*ROOT.glob("rxconfig.py")] + [
    path
    for folder in ("api", "portal", "models", "tests")
    for path in (ROOT / folder).rglob("*.py")
]


def _anchors(doc: Path) -> set[str]:
    """Explicit `<a id>` anchors, and the ones GitHub derives from headings."""
    text = doc.read_text(encoding="utf-8")
    explicit = set(re.findall(r'<a id="([a-z0-9-]+)"></a>', text))
    headings = {
        re.sub(r"[^a-z0-9 -]", "", title.strip().lower()).replace(" ", "-")
        for title in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)
    }
    return explicit | headings


def test_every_cited_section_exists():
    missing = []
    for path in SOURCES:
        for doc, anchor in CITATION.findall(path.read_text(encoding="utf-8")):
            if anchor not in _anchors(ROOT / "docs" / doc):
                missing.append(f"{path.relative_to(ROOT)}: docs/{doc}#{anchor}")
    assert not missing


def test_no_comment_cites_a_file_outside_the_repository():
    outside = re.compile(r"\b(SERVICE|STYLE)\.md\b")
    me = Path(__file__).resolve()
    found = [str(p.relative_to(ROOT)) for p in SOURCES if p != me and outside.search(p.read_text())]
    assert not found
