"""What has no domain of its own, shared by every context: settings (`config`), the database
engine (`db`, `driver`, `sql`), secrets at rest and signatures (`crypto`, `keycheck`,
`key_rotation`), outbound HTTP to public addresses only (`egress`), client addresses (`net`),
SMTP (`smtp`), start-up checks (`startup`), the two refusal families (`errors` for the HTTP
API, `refusals` for the portal; docs/architecture.md#the-house-rules), paging, money
arithmetic, rate-limit storage, country and device lookups, wording, and the outbox machinery
the mail and alert senders share.

The bottom layer: it imports no context.
"""
