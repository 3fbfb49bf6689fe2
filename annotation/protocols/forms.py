from django import forms
from django.utils.text import slugify

from annotation.protocols import setup


class TofuEvalCampaignForm(forms.Form):
    """A lead's set-up of a TofuEval task 1 or task 2 campaign; choices come from the project's own data."""

    name = forms.CharField(max_length=200)
    datasets = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, help_text="None ticked: every dataset."
    )
    splits = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, help_text="None ticked: every split."
    )
    systems = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Summarizers",
        help_text="None ticked: every summarizer.",
    )
    annotators = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    per_item = forms.IntegerField(min_value=1, max_value=20, initial=2, label="Annotators per item")
    double_share = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0,
        label="Share of items with one more annotator",
        help_text="E.g. 0.2 with 1 annotator per item: 20% of items are labelled twice.",
    )
    rounds = forms.CharField(
        initial="pilot-1, main", help_text="Comma-separated, in order; the last is the main round."
    )
    pilot_items = forms.IntegerField(min_value=0, initial=0, label="Items per pilot round")
    guidelines = forms.CharField(widget=forms.Textarea(attrs={"rows": 10}), initial=setup.GUIDELINES)

    def __init__(self, data=None, *, protocol, datasets, splits, systems, annotators):
        super().__init__(data)
        self.protocol = protocol
        self.fields["guidelines"].initial = setup.DEFAULT_GUIDELINES[protocol]
        self.fields["datasets"].choices = [(d, d or "(none)") for d in datasets]
        self.fields["splits"].choices = [(s, s or "(none)") for s in splits]
        self.fields["systems"].choices = [(s, s or "(unnamed)") for s in systems]
        self.people = {str(m.user_id): m.user for m in annotators}
        self.fields["annotators"].choices = [
            (str(m.user_id), f"{m.user.get_username()} ({m.pseudonym})") for m in annotators
        ]

    def clean_rounds(self) -> list[str]:
        rounds = [r.strip() for r in self.cleaned_data["rounds"].split(",") if r.strip()]
        if not rounds or len(set(rounds)) != len(rounds):
            raise forms.ValidationError("Name each round once, e.g. pilot-1, main.")
        return rounds

    def plan(self) -> setup.Plan:
        data = self.cleaned_data
        return setup.Plan(
            name=data["name"],
            slug=slugify(data["name"])[:80] or "campaign",
            annotators=[self.people[pk] for pk in data["annotators"]],
            datasets=data["datasets"],
            splits=data["splits"],
            systems=data["systems"],
            per_item=data["per_item"],
            double_share=data["double_share"],
            rounds=data["rounds"],
            pilot_items=data["pilot_items"],
            guidelines=data["guidelines"],
            protocol=self.protocol,
        )


class ExplanationRatingCampaignForm(forms.Form):
    """A lead's set-up of an explanation-rating campaign: which judge jobs' explanations, rated by whom."""

    name = forms.CharField(max_length=200)
    jobs = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        label="Judge jobs",
        help_text="Only judge jobs whose results carry explanations are listed. Reviewers never see which is which.",
    )
    reviewers = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    per_item = forms.IntegerField(min_value=1, max_value=20, initial=1, label="Reviewers per item")

    def __init__(self, data=None, *, jobs, reviewers):
        super().__init__(data)
        self.jobs = {str(job.pk): job for job in jobs}
        self.people = {str(m.user_id): m.user for m in reviewers}
        self.fields["jobs"].choices = [
            (
                str(job.pk),
                f"{job} · {job.endpoint.name} ({job.endpoint.model or 'offline'}) · "
                f"{job.prompt.slug if job.prompt else 'no prompt'}"
                f"{f' v{job.prompt.version}' if job.prompt else ''} · {job.explained} explained",
            )
            for job in jobs
        ]
        self.fields["reviewers"].choices = [
            (str(m.user_id), f"{m.user.get_username()} ({m.get_role_display().lower()})") for m in reviewers
        ]

    def arguments(self) -> dict:
        """The keyword arguments of explanations.create_campaign."""
        data = self.cleaned_data
        return {
            "name": data["name"],
            "jobs": [self.jobs[pk] for pk in data["jobs"]],
            "reviewers": [self.people[pk] for pk in data["reviewers"]],
            "per_item": data["per_item"],
        }


class SummEditsCampaignForm(forms.Form):
    """A lead's set-up of a SummEdits campaign over one domain's seeds."""

    name = forms.CharField(max_length=200)
    domain = forms.ChoiceField()
    annotators = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    double_share = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0.2,
        label="Share of seeds given to a second annotator",
        help_text="For agreement; the paper had at least 20%.",
    )
    edits_per_seed = forms.IntegerField(min_value=2, max_value=60, initial=30, label="Edits per seed")
    warmup = forms.IntegerField(
        min_value=0,
        max_value=20,
        initial=0,
        label="Warm-up seeds",
        help_text="Done first by every annotator; a lead sets their gold labels, annotators then see them.",
    )
    generation = forms.ChoiceField(
        choices=[
            ("on_verify", "Generate a seed's edits when it is verified"),
            ("batch", "In batches: a lead starts generation for the seeds verified so far"),
            ("none", "Use the edits the seeds already have (e.g. imported)"),
        ],
        initial="on_verify",
    )
    endpoint = forms.ModelChoiceField(
        queryset=None, required=False, help_text="Empty: the offline rule-based editor (labelled as a baseline)."
    )

    def __init__(self, data=None, *, domains, annotators):
        from annotation.llm.models import Endpoint

        super().__init__(data)
        self.fields["domain"].choices = [(d, d) for d in domains]
        self.people = {str(m.user_id): m.user for m in annotators}
        self.fields["annotators"].choices = [
            (str(m.user_id), f"{m.user.get_username()} ({m.pseudonym})") for m in annotators
        ]
        self.fields["endpoint"].queryset = Endpoint.objects.filter(is_active=True)
