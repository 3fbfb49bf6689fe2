from django import forms

from annotation.projects.models import Role


class InviteForm(forms.Form):
    email = forms.EmailField(label="E-mail address", widget=forms.EmailInput(attrs={"autocomplete": "off"}))
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
