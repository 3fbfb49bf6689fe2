from allauth.account.adapter import DefaultAccountAdapter


class InvitationOnlyAdapter(DefaultAccountAdapter):
    """No open sign-up: accounts are created only by accepting a lead's invitation."""

    def is_open_for_signup(self, request) -> bool:
        return False
