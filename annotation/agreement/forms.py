from django import forms

from annotation.agreement.services import PILOT_ROUNDS


class FilterForm(forms.Form):
    """The dashboard's GET filters; choices come from the campaign's own data."""

    round = forms.ChoiceField(required=False)
    dataset = forms.ChoiceField(required=False)
    exclude = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, label="Leave out annotators"
    )

    def __init__(self, data, *, rounds, datasets, annotators, pilot=False):
        super().__init__(data)
        pilots = [(PILOT_ROUNDS, "All pilot rounds")] if pilot else []
        self.fields["round"].choices = [("", "All rounds"), *pilots] + [(r, r) for r in rounds]
        self.fields["dataset"].choices = [("", "All datasets")] + [(d, d or "(none)") for d in datasets]
        self.fields["exclude"].choices = [(a, a) for a in annotators]

    def filters(self) -> dict:
        return self.cleaned_data if self.is_valid() else {}
