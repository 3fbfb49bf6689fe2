from django import forms
from django.contrib.auth import get_user_model


class AcceptInvitationForm(forms.Form):
    """A new account for an invited person; the password validators run in the service."""

    username = forms.CharField(
        label="User name",
        max_length=150,
        validators=[get_user_model().username_validator],
        help_text="Letters, digits and @ . + - _ only. You can also sign in with your e-mail address.",
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
    )
    password = forms.CharField(
        label="Password", strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    password_confirm = forms.CharField(
        label="Password again", strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )

    def clean(self):
        data = super().clean()
        if data.get("password") and data.get("password") != data.get("password_confirm"):
            self.add_error("password_confirm", "The two passwords differ.")
        return data
