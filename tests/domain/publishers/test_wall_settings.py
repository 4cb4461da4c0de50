"""An offerwall's hosted wall settings (`api/publishers/wall_settings.py`): every input checked
with a sentence beside it, stored normalised, saved only by the offerwall's publisher or
staff, and what GET /wall then answers: the saved origins in frame-ancestors, the saved
colour and title on the page (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from fastapi.testclient import TestClient

from api.accounts import Forbidden, NotApproved, account_for
from api.app import create_api
from api.core.db import new_session, write_session
from api.core.refusals import NUL_MESSAGE, SignedOut
from api.publishers import DEFAULT_ACCENT, offerwalls, signature, wall_settings
from api.publishers.api_key import api_key
from api.publishers.wall_settings import WallSettings, WallSettingsError
from api.wall.page import preview_html
from models import Offerwall, Role
from tests.domain.accounts.test_accounts import PASSWORD, sign_in, signup
from tests.domain.publishers.test_publisher_use_cases import _publisher
from tests.factories import FixedCountries, make_account, make_offerwall
from tests.live import ROOT, node


def refusal(**values) -> dict[str, str]:
    """The problems `checked_settings` names, input by input."""
    with pytest.raises(WallSettingsError) as refused:
        wall_settings.checked_settings(**values)
    return refused.value.field_errors()


# --- each input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", "Gem\x00Wall", NUL_MESSAGE),
        ("title", "x" * 81, "at most 80 characters (81 now)"),
        ("title", "two\nlines", "one line of text"),
        ("logo_url", "javascript:alert(1)", "must start with https://"),
        ("logo_url", "JavaScript:alert(1)//https://x", "must start with https://"),
        ("logo_url", "data:image/png;base64,AAAA", "must start with https://"),
        ("logo_url", "ftp://cdn.example.com/logo.png", "must start with https://"),
        ("logo_url", "//cdn.example.com/logo.png", "must start with https://"),
        ("logo_url", "https://", "must start with https://"),
        ("logo_url", "https://cdn.example.com/a logo.png", "cannot hold spaces"),
        ("logo_url", "https://cdn.example.com/" + "a" * 2030, "at most 2048 characters"),
        ("logo_url", "https://cdn.example.com/\x00.png", NUL_MESSAGE),
        ("currency_icon", "javascript:alert(1)", "currency icon URL must start with https://"),
        ("currency_icon", "https://cdn.example.com/coin.png\n", None),  # stripped: accepted
        ("accent", "red", "hex colour such as #4f46e5"),
        ("accent", "#12", "hex colour"),
        ("accent", "#12345g", "hex colour"),
        ("accent", "#1234567", "hex colour"),
        ("accent", "rgb(1, 2, 3)", "hex colour"),
        ("accent", "#4f46e5;background:url(https://x)", "hex colour"),
        ("origins", "https://games.example.com/play", "leave out the path"),
        ("origins", "https://games.example.com?x=1", "leave out the path, query"),
        ("origins", "https://games.example.com#top", "leave out the path, query and fragment"),
        ("origins", "https://games.example.com'", "holds a space, quote"),
        ("origins", '"https://games.example.com"', "holds a space, quote"),
        ("origins", "https://games.example.com;script-src *", "holds a space, quote"),
        ("origins", "https://a.example.com https://b.example.com", "one origin per line"),
        ("origins", "https://a.example.com\thttps://b.example.com", "one origin per line"),
        ("origins", "'self'", "holds a space, quote"),
        ("origins", "*", "start it with https://"),
        ("origins", "games.example.com", "start it with https://"),
        ("origins", "javascript:alert(1)", "start it with https://"),
        ("origins", "ftp://games.example.com", "start it with https://"),
        ("origins", "http://games.example.com", "http:// is only for localhost"),
        ("origins", "http://*.example.com", "http:// is only for localhost"),
        ("origins", "https://*", "only stand for subdomains at the start"),
        ("origins", "https://*.com", "a wildcard needs a domain under it"),
        ("origins", "https://games.*.example.com", "only stand for subdomains at the start"),
        ("origins", "https://*games.example.com", "only stand for subdomains at the start"),
        ("origins", "https://user@games.example.com", "leave out the user name"),
        ("origins", "https://games.example.com:0", "no valid port"),
        ("origins", "https://games.example.com:99999", "no valid port"),
        ("origins", "https://games.example.com:*", "no valid port"),
        ("origins", "https://-games.example.com", "no valid host name"),
        ("origins", "https://games..example.com", "no valid host name"),
        ("origins", "https://spiele.bücher.example", "xn-- form"),
        ("origins", "https://games.example.com\x00", NUL_MESSAGE),
        ("origins", "https://" + "a" * 300 + ".com", "at most 255 characters"),
        (
            "origins",
            "\n".join(f"https://site{n}.example.com" for n in range(21)),
            "At most 20 origins may frame the wall (21 given)",
        ),
    ],
)
def test_each_input_is_refused_with_a_sentence_beside_it(field, value, message):
    if message is None:
        assert getattr(wall_settings.checked_settings(**{field: value}), field) == value.strip()
        return
    errors = refusal(**{field: value})
    assert list(errors) == [field]
    assert message in errors[field]
    assert errors[field].endswith(".")


def test_an_origin_holding_a_comma_is_refused_when_given_as_a_list():
    # The form's text splits on commas; a list (the CLI's --origin) keeps each item whole,
    # and a comma would add a source to the header.
    errors = refusal(origins=["https://a.example.com,https://b.example.com"])
    assert "holds a space, quote, comma or semicolon" in errors["origins"]


def test_every_problem_is_named_at_once():
    errors = refusal(
        title="x" * 100,
        logo_url="javascript:alert(1)",
        accent="blue",
        currency_icon="ftp://x",
        origins="https://a.example.com/path",
    )
    assert set(errors) == {"title", "logo_url", "accent", "currency_icon", "origins"}


def test_values_are_stored_normalised():
    saved = wall_settings.checked_settings(
        title="  Gem Rewards  ",
        logo_url=" https://cdn.example.com/logo.png ",
        accent="#ABC",
        currency_icon="http://cdn.example.com/coin.png",
        origins=(
            "HTTPS://Games.Example.COM/\n"
            "https://games.example.com, https://shop.example.com:443\n"
            "\n"
            "  http://localhost:3000  \n"
            "http://127.0.0.1:80\n"
            "https://*.Example.com\n"
            "https://beta.example.com:8443/"
        ),
        require_signature=True,
    )
    assert saved == WallSettings(
        title="Gem Rewards",
        logo_url="https://cdn.example.com/logo.png",
        accent="#aabbcc",
        currency_icon="http://cdn.example.com/coin.png",
        origins=(
            "https://games.example.com",
            "https://shop.example.com",
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://*.example.com",
            "https://beta.example.com:8443",
        ),
        require_signature=True,
    )
    assert saved.origins_text.splitlines() == list(saved.origins)


@pytest.mark.parametrize(
    ("typed", "stored"),
    [("#4F46E5", "#4f46e5"), ("0f0", "#00ff00"), ("  #123abc ", "#123abc"), ("", DEFAULT_ACCENT)],
)
def test_an_accent_colour_is_six_lower_case_digits(typed, stored):
    assert wall_settings.checked_settings(accent=typed).accent == stored


def test_twenty_origins_fit_and_duplicates_count_once():
    twenty = [f"https://site{n}.example.com" for n in range(20)]
    assert len(wall_settings.checked_settings(origins=[*twenty, twenty[0].upper()]).origins) == 20


def test_empty_values_clear_the_settings():
    assert wall_settings.checked_settings() == WallSettings()


# --- who may save them ----------------------------------------------------------------

GOOD = {
    "title": "Gem Rewards",
    "logo_url": "https://cdn.example.com/logo.png",
    "accent": "#0F766E",
    "currency_icon": "https://cdn.example.com/gem.png",
    "origins": "https://games.example.com\nhttps://*.play.example.com",
    "require_signature": False,
}


def _save(engine, account, requested="", **values):
    with write_session(engine) as session:
        return wall_settings.save_settings(
            session=session, account=account, requested=requested, **{**GOOD, **values}
        )


def _stored(engine, offerwall_id: str) -> WallSettings:
    with new_session(engine) as session:
        wall = session.get(Offerwall, offerwall_id)
        assert wall is not None
        return wall_settings.read_settings(wall)


def test_a_publisher_saves_their_own_walls_settings(engine, box):
    account = _publisher(engine, box)
    saved = _save(engine, account)
    assert saved == _stored(engine, account.offerwall_id)
    assert saved.accent == "#0f766e"
    assert saved.origins == ("https://games.example.com", "https://*.play.example.com")
    with new_session(engine) as session:
        assert wall_settings.settings_for(session=session, account=account) == saved


def test_another_publishers_offerwall_is_refused_and_unchanged(engine, box):
    mine = _publisher(engine, box)
    theirs = _publisher(engine, box, email="other@example.com", company="Other Rewards")
    before = _stored(engine, theirs.offerwall_id)
    with pytest.raises(Forbidden):
        _save(engine, mine, requested=theirs.offerwall_id, title="Mine now")
    with new_session(engine) as session, pytest.raises(Forbidden):
        wall_settings.settings_for(session=session, account=mine, requested=theirs.offerwall_id)
    assert _stored(engine, theirs.offerwall_id) == before


def test_staff_save_the_offerwall_they_chose(engine, box):
    publisher = _publisher(engine, box)
    staff = make_account(Role.STAFF)
    saved = _save(engine, staff, requested=publisher.offerwall_id, title="Set by staff")
    assert _stored(engine, publisher.offerwall_id) == saved
    assert saved.title == "Set by staff"
    with pytest.raises(Forbidden, match="No such publisher"):
        _save(engine, staff)  # staff name the offerwall


def test_a_designer_and_no_account_are_refused(engine, box):
    publisher = _publisher(engine, box)
    designer = make_account(Role.DESIGNER, studio_id="s1")
    with pytest.raises(Forbidden):
        _save(engine, designer, requested=publisher.offerwall_id)
    with pytest.raises(SignedOut):
        _save(engine, None, requested=publisher.offerwall_id)
    assert _stored(engine, publisher.offerwall_id) == WallSettings()


def test_a_publisher_not_approved_yet_is_refused(engine, box):
    signup(engine, email="new@example.com", company="New Rewards")
    signed = sign_in(engine=engine, box=box, email="new@example.com", password=PASSWORD)
    account = account_for(engine=engine, token=signed.token)
    with pytest.raises(NotApproved):
        _save(engine, account)


def test_a_refused_save_changes_nothing(engine, box):
    account = _publisher(engine, box)
    first = _save(engine, account)
    with pytest.raises(WallSettingsError) as refused:
        _save(engine, account, title="Changed", origins="https://games.example.com/path")
    assert list(refused.value.field_errors()) == ["origins"]
    assert _stored(engine, account.offerwall_id) == first


# --- what the wall then answers -------------------------------------------------------


@pytest.fixture
def client(engine, settings, box) -> TestClient:
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    return TestClient(app, follow_redirects=False)


def _owid(engine, offerwall_id: str) -> str:
    with new_session(engine) as session:
        wall = session.get(Offerwall, offerwall_id)
        assert wall is not None and wall.owid
        return wall.owid


def test_the_wall_answers_with_the_saved_origins_colour_and_title(engine, box, client):
    account = _publisher(engine, box)
    owid = _owid(engine, account.offerwall_id)
    _save(
        engine,
        account,
        title="Gem <Rewards>",
        accent="#E11D48",
        origins="https://Games.Example.com/\nhttp://localhost:3000, https://*.play.example.com",
    )
    answer = client.get("/wall", params={"owid": owid, "uid": "alice"})
    assert answer.status_code == 200, answer.text
    csp = answer.headers["content-security-policy"]
    assert (
        "frame-ancestors https://games.example.com http://localhost:3000 "
        "https://*.play.example.com" in csp
    )
    assert "x-frame-options" not in answer.headers
    assert "--accent:#e11d48" in answer.text
    assert "<h1>Gem &lt;Rewards&gt;</h1>" in answer.text
    assert 'src="https://cdn.example.com/logo.png"' in answer.text

    _save(engine, account, title="", origins="", accent="")
    answer = client.get("/wall", params={"owid": owid, "uid": "alice"})
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert answer.headers["x-frame-options"] == "DENY"
    assert f"--accent:{DEFAULT_ACCENT}" in answer.text
    assert "<h1>Acme Rewards</h1>" in answer.text  # the offerwall's name


def test_requiring_signed_links_refuses_an_unsigned_one(engine, box, client):
    account = _publisher(engine, box)
    owid = _owid(engine, account.offerwall_id)
    _save(engine, account, require_signature=True)
    with new_session(engine) as session:
        wall = session.get(Offerwall, account.offerwall_id)
        assert wall is not None
        key = api_key(box=box, offerwall=wall)
    unsigned = client.get("/wall", params={"owid": owid, "uid": "alice"})
    assert unsigned.status_code == 403
    sig = signature(key, owid, "alice")
    signed = client.get("/wall", params={"owid": owid, "uid": "alice", "sig": sig})
    assert signed.status_code == 200


# --- the link, the preview, the examples ------------------------------------------------


def test_the_link_names_the_owid_and_asks_for_sig_when_links_must_be_signed(engine, box):
    wall, _key = make_offerwall(engine, box)
    base = "https://qw.example.com/"
    link = wall_settings.link_for(base_url=base, offerwall=wall)
    assert link == f"https://qw.example.com/wall?owid={wall.owid}&uid={{uid}}"
    assert wall_settings.wall_link(base_url=base, owid="ow1", require_signature=True) == (
        "https://qw.example.com/wall?owid=ow1&uid={uid}&sig={sig}"
    )
    snippet = wall_settings.iframe_snippet(link)
    assert snippet.startswith(f'<iframe src="{link}" ') and snippet.endswith("></iframe>")
    pending, _ = make_offerwall(engine, box, name="Pending", approve=False)
    assert wall_settings.link_for(base_url=base, offerwall=pending) == ""


def _preview(wall: Offerwall, **typed: str) -> str:
    """The workspace's preview of the typed theme, as the portal's Wall page draws it."""
    theme = wall_settings.preview_theme(wall, **typed)
    return preview_html(theme, exchange_rate=wall.exchange_rate, decimals=wall.currency_decimals)


def test_the_preview_shows_the_typed_theme_and_the_saved_one_for_a_half_typed_value(engine, box):
    account = _publisher(engine, box)
    _save(engine, account, accent="#0f766e")
    with write_session(engine) as session:
        wall = session.get(Offerwall, account.offerwall_id)
        assert wall is not None
        offerwalls.set_currency(
            session=session, offerwall=wall, name="Gems", code="GEM", exchange_rate=100, decimals=0
        )
        typed = _preview(
            wall,
            title="<b>Typed</b>",
            logo_url="https://cdn.example.com/new.png",
            accent="#F00",
            currency_icon="javascript:alert(1)",
        )
        half = _preview(wall, title="", logo_url="", accent="#f0", currency_icon="")
    assert "<h1>&lt;b&gt;Typed&lt;/b&gt;</h1>" in typed
    assert "--accent:#ff0000" in typed
    assert 'src="https://cdn.example.com/new.png"' in typed
    assert "javascript:" not in typed
    # The saved icon stands in for a refused one.
    assert 'src="https://cdn.example.com/gem.png"' in typed
    assert "Gems" in typed and "150 Gems" in typed  # $1.50 at 100 Gems per USD
    assert '<base target="_blank">' in typed and "<script" not in typed
    assert "--accent:#0f766e" in half  # "#f0" is no colour yet: the saved one
    assert "<h1>Acme Rewards</h1>" in half


EXAMPLE_BASE, EXAMPLE_OWID = "https://questwall.example.com", "owab23cd45ef"
KEY, UID = "qw_ak_example-key", "player 42/é"


def _expected_link() -> str:
    from urllib.parse import urlencode

    sig = signature(KEY, EXAMPLE_OWID, UID)
    return f"{EXAMPLE_BASE}/wall?" + urlencode({"owid": EXAMPLE_OWID, "uid": UID, "sig": sig})


def test_the_python_example_signs_as_the_wall_checks():
    code = wall_settings.signing_examples(base_url=EXAMPLE_BASE, owid=EXAMPLE_OWID)["Python"]
    scope: dict = {}
    exec(code, scope)
    assert scope["wall_link"](KEY, UID) == _expected_link()


def test_the_node_example_signs_as_the_wall_checks(tmp_path):
    code = wall_settings.signing_examples(base_url=EXAMPLE_BASE, owid=EXAMPLE_OWID)["Node.js"]
    script = tmp_path / "link.mjs"
    script.write_text(code + f"\nconsole.log(wallLink({json.dumps(KEY)}, {json.dumps(UID)}));\n")
    out = subprocess.run([node(), str(script)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == _expected_link()


def test_the_integration_guide_shows_the_same_examples():
    guide = (ROOT / "docs" / "publisher-integration.md").read_text(encoding="utf-8")
    section = guide.split("### Theming and embedding the wall", 1)[1].split("\n## ", 1)[0]
    examples = wall_settings.signing_examples(base_url=EXAMPLE_BASE, owid=EXAMPLE_OWID)
    for language, fence in (("Python", "python"), ("Node.js", "js"), ("PHP", "php")):
        assert f"```{fence}\n{examples[language]}```" in section, language
    assert re.search(r"frame-ancestors", section)
