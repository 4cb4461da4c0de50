"""Each offerwall's fraud rules (docs/fraud.md#rules): the action of every signal (the
default where the offerwall sets none) and whether held and rejected conversions are told
by postback. Staff set them on the Fraud page or with `questwall fraud rules`.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import Session

from api import audit
from api.fraud import policy as fraud
from models.tables import offerwall as _offerwall


@dataclass(frozen=True)
class OfferwallRules:
    id: str
    name: str
    owid: str
    actions: dict[str, str]  # every signal, the default where the offerwall sets none
    review_postbacks: bool


def offerwall_rules(*, session: Session, policy: fraud.Policy) -> list[OfferwallRules]:
    rows = session.execute(
        sa.select(
            _offerwall.c.id,
            _offerwall.c.name,
            _offerwall.c.owid,
            _offerwall.c.fraud_actions,
            _offerwall.c.review_postbacks,
        )
        .where(_offerwall.c.owid.is_not(None))
        .order_by(_offerwall.c.name)
    ).all()
    return [
        OfferwallRules(
            r.id,
            r.name,
            r.owid or "",
            {s: policy.action(s, r.fraud_actions) for s in fraud.SIGNALS},
            bool(r.review_postbacks),
        )
        for r in rows
    ]


def set_offerwall_rules(
    *,
    session: Session,
    offerwall_id: str,
    actions: dict[str, str],
    review_postbacks: bool,
    policy: fraud.Policy,
) -> None:
    """Store an offerwall's rules: only the actions that differ from the defaults, so a
    later change of a default reaches every offerwall that did not choose otherwise."""
    checked = fraud.checked_actions(actions)
    defaults = policy.defaults()
    own = {s: a for s, a in checked.items() if a != defaults[s]}
    before = session.execute(
        sa.select(
            _offerwall.c.name, _offerwall.c.fraud_actions, _offerwall.c.review_postbacks
        ).where(_offerwall.c.id == offerwall_id)
    ).first()
    if before is None:
        raise fraud.FraudRuleError("No such offerwall.")
    session.execute(
        sa.update(_offerwall)
        .where(_offerwall.c.id == offerwall_id)
        .values(fraud_actions=own, review_postbacks=review_postbacks)
    )
    audit.note_changed(
        session,
        "offerwall.fraud_rules_changed",
        audit.Target("offerwall", offerwall_id, before.name, ("offerwall", offerwall_id)),
        {"fraud_actions": before.fraud_actions or {}, "review_postbacks": before.review_postbacks},
        {"fraud_actions": own, "review_postbacks": review_postbacks},
    )
