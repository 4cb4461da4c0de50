"""Publishers and their offerwalls: the offerwall's lifecycle and settings, the signup,
the staff queue, an offerwall's payout rules as staff set them (`staff_payouts`), the API
key, and the hosted wall's settings.
"""

from api.publishers.offerwalls import OfferwallError
from api.publishers.signup import signup_publisher
from api.publishers.wall_settings import ORIGINS_MAX, TITLE_MAX, WallSettings
from api.publishers.wall_theme import DEFAULT_ACCENT, Theme, safe_image, signature

__all__ = [
    "DEFAULT_ACCENT",
    "ORIGINS_MAX",
    "TITLE_MAX",
    "OfferwallError",
    "Theme",
    "WallSettings",
    "safe_image",
    "signature",
    "signup_publisher",
]
