"""The publisher's offer catalog (page.py) and its state (state.py): what their offerwall may
list, with caps left and ready tracking links."""
