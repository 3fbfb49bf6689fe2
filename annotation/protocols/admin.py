from django.contrib import admin

from annotation.protocols.models import (
    Adjudication,
    Assignment,
    Campaign,
    Item,
    Judgment,
    JudgmentRevision,
    ReviewDecision,
    Taxonomy,
    TaxonomyLabel,
)


class LabelInline(admin.TabularInline):
    model = TaxonomyLabel
    extra = 0
    fields = ["order", "code", "name", "parent", "definition"]


@admin.register(Taxonomy)
class TaxonomyAdmin(admin.ModelAdmin):
    list_display = ["slug", "version", "name", "source"]
    inlines = [LabelInline]


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["slug", "project", "protocol", "status", "is_release"]
    list_filter = ["project", "protocol", "status", "is_release"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["key", "campaign", "round", "is_gold", "is_warmup"]
    list_filter = ["campaign", "round", "is_gold", "is_warmup"]
    raw_id_fields = ["document", "topic", "sentence", "summaries"]
    search_fields = ["key"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "stage", "status", "submitted_at"]
    list_filter = ["status", "stage"]
    raw_id_fields = ["item", "annotator"]


class RevisionInline(admin.TabularInline):
    model = JudgmentRevision
    extra = 0
    readonly_fields = ["version", "value", "explanation", "changed_by", "changed_at"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    """Read-only: a label changes through the annotation screens, which keep its history."""

    list_display = ["assignment", "dimension", "target", "value", "version", "updated_at"]
    readonly_fields = [
        "assignment",
        "dimension",
        "target",
        "summary",
        "sentence",
        "value",
        "explanation",
        "taxonomy",
        "version",
        "created_at",
        "updated_at",
    ]
    list_filter = ["dimension"]
    raw_id_fields = ["assignment", "summary", "sentence"]
    inlines = [RevisionInline]


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    readonly_fields = [
        "item",
        "dimension",
        "target",
        "summary",
        "sentence",
        "value",
        "note",
        "taxonomy",
        "decided_by",
        "decided_at",
        "version",
    ]
    list_display = ["item", "dimension", "target", "value", "decided_by", "decided_at"]
    raw_id_fields = ["item", "summary", "sentence", "decided_by"]


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(admin.ModelAdmin):
    """Read-only: decisions are made and checked on the review screens, which keep their history."""

    list_display = ["item", "target", "decision", "status", "reviewer", "checked_by", "decided_at"]
    list_filter = ["status", "decision"]
    readonly_fields = [
        "item",
        "summary",
        "sentence",
        "target",
        "decision",
        "note",
        "reviewer",
        "decided_at",
        "status",
        "checked_by",
        "check_note",
        "checked_at",
    ]
