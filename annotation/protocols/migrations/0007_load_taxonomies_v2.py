from django.db import migrations

from annotation.protocols import taxonomy_data


def load(apps, schema_editor):
    taxonomy_data.load(
        apps.get_model("protocols", "Taxonomy"),
        apps.get_model("protocols", "TaxonomyLabel"),
        taxonomies=taxonomy_data.TAXONOMIES_V2,
        version=2,
    )


class Migration(migrations.Migration):
    dependencies = [("protocols", "0006_alter_campaign_protocol")]
    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
