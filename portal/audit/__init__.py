"""Reading the audit trail in the portal: staff's Audit log, the History of a publisher,
a game or a mission, and each publisher's and studio's Security log."""
