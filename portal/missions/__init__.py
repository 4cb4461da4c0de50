"""Missions and quests in the portal: the Missions page and the rule tester (missions.py), the
mission and quest editors (offer_editors.py), their states (missions_state.py,
offer_editors_state.py, offer_editing.py, rule_inputs.py) and the parts only these pages
draw (rule_builder.py, live_operations.py, offer_card.py, economics.py)."""
