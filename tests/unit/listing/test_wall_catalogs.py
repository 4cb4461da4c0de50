"""The wall's catalogs: wall.pot holds every message of the templates and of the code, and
every language's catalog translates all of them (a new language is one more file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir, extract_from_file
from babel.messages.pofile import read_po

from api.wall import i18n

WALL = Path(i18n.__file__).parent
# Beyond the wall's package: the form's own messages, and the refusals of the service
# behind it, api/tickets/report.py (each marked N_, shown translated).
SOURCES = (WALL.parent / "routes" / "wall.py", WALL.parent / "tickets" / "report.py")


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
