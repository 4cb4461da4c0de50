"""The wall's catalogs: wall.pot holds every message of the templates and of the code, and
every language's catalog translates all of them (a new language is one more file)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir, extract_from_file
from babel.messages.pofile import read_po

from api.wall import i18n

WALL = Path(i18n.__file__).parent
API = WALL.parent
# The refusal pages of a tracking link, which a wall's card opens: where each refusal is
# written (marked N_, shown translated).
TRACKING = (
    API / "routes" / "tracking.py",
    API / "tracking" / "clicks.py",
    API / "tracking" / "live_ops.py",
    API / "fraud" / "policy.py",
)
# Beyond the wall's package: the form's own messages, the refusals of the service behind
# it, api/tickets/report.py (each marked N_, shown translated), and the tracking links'.
SOURCES = (API / "routes" / "wall.py", API / "tickets" / "report.py", *TRACKING)


def extracted() -> set[str]:
    method_map = [("**.py", "python"), ("templates/**.html", "jinja2")]
    options = {"templates/**.html": {"extensions": "jinja2.ext.i18n"}}
    keywords = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None}
    found = set()
    for _, _, message, _, _ in extract_from_dir(
        str(WALL), method_map, options_map=options, keywords=keywords
    ):
        found.add(message[0] if isinstance(message, tuple) else message)
    for source in SOURCES:
        for _, message, _, _ in extract_from_file("python", str(source), keywords=keywords):
            found.add(message[0] if isinstance(message, tuple) else message)
    return found


def catalog(path: Path):
    with path.open("rb") as po:
        return read_po(po)


def test_the_template_catalog_is_up_to_date():
    pot = {
        m.id if isinstance(m.id, str) else m.id[0]
        for m in catalog(WALL / "locales/wall.pot")
        if m.id
    }
    assert pot == extracted(), "run `make messages` and translate what is new"


@pytest.mark.parametrize("language", [lang for lang in i18n.supported() if lang != i18n.SOURCE])
def test_every_language_translates_every_message(language):
    po = catalog(WALL / "locales" / f"{language}.po")
    translated = {
        (m.id if isinstance(m.id, str) else m.id[0])
        for m in po
        if m.id and all(m.string if isinstance(m.string, tuple) else [m.string])
    }
    assert extracted() <= translated


def test_languages_are_negotiated_from_the_header():
    assert i18n.supported()[:2] == ("en", "de")
    assert i18n.choose(None, "de-CH, en;q=0.5") == "de"
    assert i18n.choose(None, "fr, en;q=0.1, de;q=0.5") == "de"
    assert i18n.choose(None, "de;q=0, en") == "en"
    assert i18n.choose(None, "xx, yy;q=abc") == "en"
    assert i18n.choose("DE", "en") == "de"
    assert i18n.choose("zz", "de") == "de"
    assert i18n.choose(None, ",;;q=,=," * 1000) == "en"


def test_every_tracking_refusal_is_written_for_the_catalogs():
    """Each TrackingRefusal's title and message is an N_("…") where it is raised, or a
    name of one (the fraud screen's words), in a file `make messages` reads: a refused
    click's page then speaks the wall's language."""
    raised = 0
    for path in [*sorted((API / "tracking").glob("*.py")), API / "routes" / "tracking.py"]:
        marked = _marked_names(API / "fraud" / "policy.py") | _marked_names(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "TrackingRefusal":
                raised += 1
                for text in node.args[2:4]:
                    where = f"{path.name}:{node.lineno}"
                    if isinstance(text, ast.Call) and getattr(text.func, "id", "") == "N_":
                        assert path in TRACKING, f"{where}: add {path.name} to the catalogs"
                    else:
                        assert isinstance(text, ast.Name | ast.Attribute), where
                        assert _name(text) in marked, where
    assert raised > 10


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")


def _marked_names(path: Path) -> set[str]:
    """The names bound to an N_("…") in a module (or to such a name)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets if isinstance(t, ast.Name | ast.Tuple)]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            flat = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
            for target, value in zip(flat, values, strict=False):
                if (isinstance(value, ast.Call) and getattr(value.func, "id", "") == "N_") or (
                    isinstance(value, ast.Attribute) and value.attr.startswith("REFUSAL_")
                ):
                    names.add(_name(target))
    return names
