from django.db import migrations

from annotation.protocols import taxonomy_data


def load(apps, schema_editor):
    taxonomy_data.load(apps.get_model("protocols", "Taxonomy"), apps.get_model("protocols", "TaxonomyLabel"))


class Migration(migrations.Migration):
    dependencies = [("protocols", "0001_initial")]
    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
