"""What games send: the signed-request check (`signing`), the custom-events use case
(`custom_events`: identifiers, then events, in one transaction), the lookup of platform user
ids, events' retention, requests refused as a whole, and the live event debugger's read side.
`_identifiers`, `_event_store` and `_group_commit` serve the custom-events use case alone.
"""
