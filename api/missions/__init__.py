"""Missions and quests: the one owner of their rules (`offers`), the rule engine
(`rules`), players' progress and the conversions it makes (`progress`), the in-memory index of
active missions (`index`), the open-offer predicate, the editor's forms and use cases
(`forms`, `designer`) and each mission's funnel.
"""
