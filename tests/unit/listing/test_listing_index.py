"""A listing's index (`api.listing.players.ListingIndex`): a page of the listing without
some offers, found in a few steps, is the page a plain filter-then-slice would give."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from api.listing import Listed, ListingIndex


def _listing(size: int) -> list[Listed]:
    return [Listed(kind="mission", id=f"m{n}", doc={}) for n in range(size)]


@given(
    size=st.integers(0, 60),
    skipped=st.sets(st.integers(0, 70)),
    start=st.integers(0, 80),
    page=st.integers(1, 25),
)
def test_a_page_without_some_offers_is_the_filtered_slice(
    size: int, skipped: set[int], start: int, page: int
) -> None:
    listing = _listing(size)
    kept = [offer for n, offer in enumerate(listing) if n not in skipped]
    index = ListingIndex.of(listing)
    assert index.page_without(skipped, start, page) == kept[start : start + page]


def test_positions_name_only_what_the_listing_holds() -> None:
    index = ListingIndex.of(_listing(5))
    assert index.positions({"m0", "m3", "elsewhere"}) == {0, 3}
    assert index.listing[index.position["m4"]].id == "m4"
