import re
import uuid
from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError

from annotation.llm.models import Endpoint, Job, Prompt
from annotation.projects.models import Project, Role
from annotation.protocols.models import Campaign

# The worker sends the named variable's value to the base URL as a bearer token: from the web, only
# names that read as an API key, never one of the server's own secrets (the command line may name any).
KEY_VARIABLE = re.compile(r"^[A-Z][A-Z0-9_]*_KEY$")
NOT_A_KEY_VARIABLE = re.compile(r"SECRET|PASSWORD|PASSWD|PRIVATE|SIGNING|SESSION|DATABASE|DJANGO|CELERY|REDIS")


class EndpointForm(forms.ModelForm):
    """Add or change an endpoint. A lead's endpoint belongs to a project they lead (the only one
    they lead, unless they choose); only staff add shared endpoints or change them."""

    def __init__(self, data=None, *, user, **kwargs):
        super().__init__(data, **kwargs)
        self.user = user
        led = Project.objects.filter(
            memberships__user=user, memberships__role=Role.LEAD, memberships__is_external=False
        ).order_by("name")
        field = self.fields["project"]
        field.queryset = Project.objects.order_by("name") if user.is_staff else led
        field.empty_label = "Shared by every project" if user.is_staff else "The project I lead"
        if self.instance.pk and not user.is_staff:
            field.disabled = True  # a lead does not move an endpoint to (or from) another project

    def clean_project(self):
        project = self.cleaned_data.get("project")
        if self.instance.pk and not self.user.is_staff:
            return self.instance.project
        if project is None and not self.user.is_staff:
            led = list(self.fields["project"].queryset[:2])
            if len(led) != 1:
                raise ValidationError("Choose the project this endpoint is for; only staff add shared endpoints.")
            return led[0]
        return project

    def clean_key_env(self):
        name = self.cleaned_data.get("key_env", "")
        if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
            return name  # empty, or not a variable name at all: the model's validator says so
        if not KEY_VARIABLE.match(name) or NOT_A_KEY_VARIABLE.search(name):
            raise ValidationError(
                "The name of a variable that holds an API key and nothing else, ending in _KEY "
                "(e.g. OPENAI_API_KEY); the server's own secrets cannot be named here."
            )
        return name

    class Meta:
        model = Endpoint
        fields = [
            "name",
            "project",
            "kind",
            "base_url",
            "model",
            "key_env",
            "timeout_seconds",
            "max_concurrency",
            "requests_per_minute",
            "price_input_per_1k",
            "price_output_per_1k",
            "is_active",
        ]
        labels = {
            "base_url": "Base URL",
            "key_env": "Key variable",
            "price_input_per_1k": "Price per 1k input tokens (USD)",
            "price_output_per_1k": "Price per 1k output tokens (USD)",
        }
        help_texts = {
            "base_url": "E.g. https://api.openai.com/v1, http://vllm:8000/v1 or http://127.0.0.1:11434/v1 (Ollama).",
            "name": "A short slug, e.g. gpt-4o-mini or local-llama.",
        }


class PromptForm(forms.Form):
    """Editing a prompt saves a new version; `based_on` catches a concurrent edit."""

    name = forms.CharField(max_length=200)
    system = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    template = forms.CharField(widget=forms.Textarea(attrs={"rows": 18}))
    note = forms.CharField(max_length=500, label="What changed", help_text="Kept with the new version.")
    based_on = forms.IntegerField(widget=forms.HiddenInput)


class JobForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[(k, label) for k, label in Job.Kind.choices if k in ("topics", "summaries", "judge")]
    )
    endpoints = forms.ModelMultipleChoiceField(
        queryset=Endpoint.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text="One job per endpoint, e.g. summaries from several models.",
    )
    prompt = forms.ModelChoiceField(
        queryset=Prompt.objects.all(),
        required=False,
        help_text="Empty: the newest version of the kind's default prompt. The offline baseline uses no prompt.",
    )
    n = forms.IntegerField(
        min_value=1,
        max_value=60,
        required=False,
        label="How many",
        help_text="Topics per document (3) or edits per seed (30).",
    )
    temperature = forms.FloatField(
        min_value=0, max_value=2, required=False, help_text="Empty: 0.7 for summaries, 0 otherwise."
    )
    campaign = forms.ModelChoiceField(
        queryset=Campaign.objects.none(), required=False, help_text="Judge: only the summaries of this campaign."
    )
    rounds = forms.IntegerField(
        min_value=1, max_value=10, initial=3, required=False, help_text="Debate: at most this many rounds."
    )
    debates = forms.IntegerField(
        min_value=1, max_value=10, initial=1, required=False, help_text="Debate: simultaneous debates per sentence."
    )
    aggregate = forms.ChoiceField(
        choices=[("debate", "by debate vote"), ("agent", "by agent vote")], required=False, label="Debates aggregated"
    )
    budget_usd = forms.DecimalField(
        min_value=Decimal("0.0001"),
        max_digits=12,
        decimal_places=4,
        required=False,
        label="Budget (USD)",
        help_text="The job stops when its cost reaches this.",
    )

    # one per rendering of the form: a double click or a resent form starts its jobs once
    request_key = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)

    def __init__(self, data=None, *, project):
        super().__init__(data, initial={"request_key": uuid.uuid4().hex})
        self.fields["endpoints"].queryset = Endpoint.objects.filter(is_active=True).usable_by(project)
        self.fields["campaign"].queryset = Campaign.objects.filter(project=project)

    def params(self) -> dict:
        data = self.cleaned_data
        params = {}
        if data["kind"] in (Job.Kind.TOPICS, Job.Kind.EDITS) and data.get("n"):
            params["n"] = data["n"]
        if data.get("temperature") is not None:
            params["temperature"] = data["temperature"]
        if data["kind"] == Job.Kind.DEBATE:
            params |= {k: data[k] for k in ("rounds", "debates", "aggregate") if data.get(k)}
        if data["kind"] in (Job.Kind.JUDGE, Job.Kind.DEBATE) and data.get("campaign"):
            params["campaign"] = data["campaign"].pk
        return params


class ResumeForm(forms.Form):
    retry_failed = forms.BooleanField(required=False, label="Also retry the failed units")
    budget_usd = forms.DecimalField(
        min_value=Decimal("0.0001"), max_digits=12, decimal_places=4, required=False, label="New budget (USD)"
    )
