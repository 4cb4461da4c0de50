"""SQLModel tables shared by the API and the portal. Imports no web framework."""

from models.accounts import (
    AccountTotp,
    PasswordReset,
    PortalSession,
    RecoveryCode,
    Role,
    SignInOrigin,
    SignInThrottle,
    Studio,
    User,
)
from models.alerts import AlertAttempt, AlertMessage
from models.audit import AuditChain, AuditEvent
from models.economics import BudgetSpend, PayoutRule, Promotion
from models.events import Event, IdempotencyRecord, SignedRefusal, SignedRequest
from models.games import Game, GameCredential
from models.keys import MasterKeyCheck
from models.mail import MailMessage, MailStatus
from models.offers import CapCount, CatalogVersion, Mission, MissionPool, Quest
from models.offerwalls import Offerwall, OfferwallStatus
from models.ops import PruneRun, WorkerHeartbeat
from models.players import GameUser, GameUserIdentifier, PlatformUser, PlatformUserIdentifier
from models.postbacks import Postback, PostbackAttempt, PostbackKind, PostbackStatus
from models.tickets import SupportTicket, TicketStatus
from models.tracking import (
    BlockedEntry,
    BlockKind,
    CheatFlag,
    Click,
    Conversion,
    ConversionStatus,
    Progress,
    ProgressStatus,
    RefusalReason,
    RefusedClick,
)
from models.webhooks import (
    EndpointStatus,
    MessageStatus,
    WebhookAttempt,
    WebhookEndpoint,
    WebhookMessage,
)

__all__ = [
    "AccountTotp",
    "AlertAttempt",
    "AlertMessage",
    "AuditChain",
    "AuditEvent",
    "BlockKind",
    "BlockedEntry",
    "BudgetSpend",
    "CapCount",
    "CatalogVersion",
    "CheatFlag",
    "Click",
    "Conversion",
    "ConversionStatus",
    "EndpointStatus",
    "Event",
    "Game",
    "GameCredential",
    "GameUser",
    "GameUserIdentifier",
    "IdempotencyRecord",
    "MailMessage",
    "MailStatus",
    "MasterKeyCheck",
    "MessageStatus",
    "Mission",
    "MissionPool",
    "Offerwall",
    "OfferwallStatus",
    "PasswordReset",
    "PayoutRule",
    "PlatformUser",
    "PlatformUserIdentifier",
    "PortalSession",
    "Postback",
    "PostbackAttempt",
    "PostbackKind",
    "PostbackStatus",
    "Progress",
    "ProgressStatus",
    "Promotion",
    "PruneRun",
    "Quest",
    "RecoveryCode",
    "RefusalReason",
    "RefusedClick",
    "Role",
    "SignInOrigin",
    "SignInThrottle",
    "SignedRefusal",
    "SignedRequest",
    "Studio",
    "SupportTicket",
    "TicketStatus",
    "User",
    "WebhookAttempt",
    "WebhookEndpoint",
    "WebhookMessage",
    "WorkerHeartbeat",
]
