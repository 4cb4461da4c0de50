"""The rule builder's rows and their keys (portal/missions/rule_inputs.py): a change of the
rule's shape keeps each row's key, and a form the browser read before it saw the change
is read row by row, by key, with nothing typed dropped or put in another row."""

from __future__ import annotations

from portal.missions.rule_inputs import (
    ROW_KEY,
    Matcher,
    matcher_rows,
    read_matchers,
    rule_fields,
    with_matchers,
)

# A loaded mission's inputs (as form_values gives them): three OR groups, no keys yet.
GROUPS = {
    "rule.anyOf.0.event": "KILL",
    "rule.anyOf.0.conditions.0.field": "traits.map",
    "rule.anyOf.0.conditions.0.op": "==",
    "rule.anyOf.0.conditions.0.value": "dust",
    "rule.anyOf.1.event": "ASSIST",
    "rule.anyOf.2.event": "WIN",
    "rule.completion.kind": "count",
    "rule.completion.threshold": "3",
}


def drawn(values: dict[str, str]) -> dict[str, str]:
    """The form the builder draws from `values`: each row's inputs and its key."""
    form = {k: v for k, v in values.items() if not k.endswith(ROW_KEY)}
    for m in matcher_rows(values):
        form[f"{m.prefix}.{ROW_KEY}"] = m.key
        form.setdefault(f"{m.prefix}.event", "")
        for c in m.conditions:
            form[f"{c.name}.{ROW_KEY}"] = c.key
            for part, default in (("field", ""), ("op", ">="), ("value", "")):
                form.setdefault(f"{c.name}.{part}", default)
    return form


def without(matchers: list[Matcher], key: str) -> list[Matcher]:
    return [m for m in matchers if m.key != key]


def test_a_row_keeps_its_key_when_the_rows_before_it_go():
    before = matcher_rows(GROUPS)
    assert [m.key for m in before] == ["rule.anyOf.0", "rule.anyOf.1", "rule.anyOf.2"]
    after = with_matchers(GROUPS, "anyOf", without(read_matchers(GROUPS, "anyOf"), "rule.anyOf.1"))
    rows = matcher_rows(after)
    assert [(m.key, m.prefix) for m in rows] == [
        ("rule.anyOf.0", "rule.anyOf.0"),
        ("rule.anyOf.2", "rule.anyOf.1"),  # renamed, the same row
    ]
    assert [c.key for c in rows[0].conditions] == ["rule.anyOf.0.conditions.0"]
    # The second group's empty condition row is named after its group's key, not its place.
    assert [c.key for c in rows[1].conditions] == ["rule.anyOf.2.conditions.0"]


def test_a_form_read_before_a_removal_reached_the_browser_is_read_by_its_rows():
    form = drawn(GROUPS) | {"rule.anyOf.2.event": "WIN_RANKED"}  # typed in the third group
    now = with_matchers(GROUPS, "anyOf", without(read_matchers(GROUPS, "anyOf"), "rule.anyOf.1"))
    fields = rule_fields(form, now)
    assert {k: v for k, v in fields.items() if ".event" in k} == {
        "rule.anyOf.0.event": "KILL",
        "rule.anyOf.1.event": "WIN_RANKED",
    }
    assert fields["rule.anyOf.0.conditions.0.value"] == "dust"
    assert fields["rule.completion.threshold"] == "3"
    assert not [k for k in fields if k.endswith(ROW_KEY) or k.startswith("rule.anyOf.2")]


def test_a_row_added_after_the_form_was_read_comes_from_the_state():
    form = drawn(GROUPS)
    matchers = read_matchers(GROUPS, "anyOf")
    now = with_matchers(GROUPS, "anyOf", [*matchers, Matcher("new-1", "LEVEL_UP")])
    fields = rule_fields(form, now)
    assert fields["rule.anyOf.3.event"] == "LEVEL_UP"
    assert fields["rule.anyOf.2.event"] == "WIN"


def test_a_form_of_the_rows_the_state_has_is_submitted_as_it_is():
    values = {"rule.event": "MATCH_END", "rule.completion.kind": "count"}
    form = drawn(values) | {"rule.conditions.0.field": "value", "rule.conditions.0.value": "9"}
    assert rule_fields(form, values) == {k: v for k, v in form.items() if ROW_KEY not in k}


def test_a_change_of_shape_keeps_the_first_matchers_keys():
    values = {"rule.event": "MATCH_END", "rule.conditions.0.field": "value"}
    matchers = [*read_matchers(values, "event"), Matcher("new-1")]
    steps = matcher_rows(with_matchers(values, "steps", matchers))
    assert [(m.key, m.prefix) for m in steps] == [
        ("rule", "rule.steps.0"),
        ("new-1", "rule.steps.1"),
    ]
    assert [c.key for c in steps[0].conditions] == ["rule.conditions.0"]
    assert [c.name for c in steps[0].conditions] == ["rule.steps.0.conditions.0"]
