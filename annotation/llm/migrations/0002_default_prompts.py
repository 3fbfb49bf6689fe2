"""Load version 1 of the default prompts (llm/prompt_data.py)."""

from django.db import migrations

from annotation.llm.prompt_data import DEFAULT_PROMPTS


def load(apps, schema_editor):
    Prompt = apps.get_model("llm", "Prompt")
    for spec in DEFAULT_PROMPTS:
        Prompt.objects.get_or_create(slug=spec["slug"], version=1, defaults={k: v for k, v in spec.items() if k != "slug"})


def unload(apps, schema_editor):
    Prompt = apps.get_model("llm", "Prompt")
    Prompt.objects.filter(slug__in=[p["slug"] for p in DEFAULT_PROMPTS], version=1, created_by=None).delete()


class Migration(migrations.Migration):
    dependencies = [("llm", "0001_initial")]
    operations = [migrations.RunPython(load, unload)]
