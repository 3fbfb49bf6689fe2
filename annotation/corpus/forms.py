from pathlib import Path

from django import forms

from annotation.corpus import services

FORMAT_LABELS = {
    "jsonl": "Attest JSONL (this platform's export)",
    "tofueval": "TofuEval release",
    "summedits": "SummEdits release",
    "madisse": "MADISSE (ambiguity) release",
    "ramprasad": "Ramprasad et al. 2024 release",
    "labels": "Labels collected elsewhere (item, annotator, dimension, value)",
}


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file input that takes several files (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        if isinstance(data, (list, tuple)) and data:
            return [super(MultipleFileField, self).clean(item, initial) for item in data]
        return [super().clean(data or None, initial)]


class ImportForm(forms.Form):
    format = forms.ChoiceField(choices=[(key, FORMAT_LABELS.get(key, key)) for key in services.FORMATS])
    files = MultipleFileField(label="Files", help_text="One or more files of the chosen format.")
    documents = forms.FileField(
        label="Documents file (TofuEval only, optional)",
        required=False,
        help_text="The source documents, when the release keeps them in a separate file.",
    )

    def uploads(self) -> list:
        """Every file for start_import: the documents file goes last, named in the options."""
        documents = self.cleaned_data.get("documents")
        return self.cleaned_data["files"] + ([documents] if documents else [])

    def options(self) -> dict:
        documents = self.cleaned_data.get("documents")
        return {"documents_name": Path(documents.name).name} if documents else {}


class DocumentFilterForm(forms.Form):
    """The GET filters of the document browser; choices are the project's own datasets and splits."""

    dataset = forms.ChoiceField(required=False)
    split = forms.ChoiceField(required=False)
    q = forms.CharField(label="Document id contains", required=False, max_length=255)

    def __init__(self, data, *, datasets, splits):
        super().__init__(data)
        self.fields["dataset"].choices = [("", "All datasets")] + [(d, d or "(none)") for d in datasets]
        self.fields["split"].choices = [("", "All splits")] + [(s, s or "(none)") for s in splits]

    def filter(self, queryset):
        if not self.is_valid():
            return queryset.none()
        data = self.cleaned_data
        if data["dataset"]:
            queryset = queryset.filter(dataset=data["dataset"])
        if data["split"]:
            queryset = queryset.filter(split=data["split"])
        if data["q"]:
            queryset = queryset.filter(external_id__icontains=data["q"])
        return queryset
