from django.contrib import admin

from annotation.corpus.models import Document, EditedSummary, ImportJob, SeedSummary, Summary, SummarySentence, Topic


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "dataset", "split", "kind", "text_missing"]
    list_filter = ["project", "dataset", "split", "kind", "text_missing"]
    search_fields = ["external_id", "text"]


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["name", "document", "origin"]
    search_fields = ["name", "document__external_id"]
    raw_id_fields = ["document"]


class SentenceInline(admin.TabularInline):
    model = SummarySentence
    extra = 0


@admin.register(Summary)
class SummaryAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "document", "system", "origin"]
    list_filter = ["project", "origin", "system"]
    search_fields = ["external_id", "text"]
    raw_id_fields = ["document", "topic"]
    inlines = [SentenceInline]


@admin.register(SeedSummary)
class SeedSummaryAdmin(admin.ModelAdmin):
    list_display = ["summary", "domain"]
    list_filter = ["domain"]
    raw_id_fields = ["summary"]


@admin.register(EditedSummary)
class EditedSummaryAdmin(admin.ModelAdmin):
    list_display = ["summary", "seed"]
    raw_id_fields = ["summary", "seed"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["pk", "project", "format", "status", "created_by", "created_at", "finished_at"]
    list_filter = ["status", "format"]
    readonly_fields = ["files", "errors", "warnings", "counts"]
