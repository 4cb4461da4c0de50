"""Staff's System page: what an on-call person opens first."""
