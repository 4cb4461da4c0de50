"""Publishers and their offerwalls: the offerwall's lifecycle and settings, the signup,
the staff queue, the API key, and the hosted wall's settings.
"""
