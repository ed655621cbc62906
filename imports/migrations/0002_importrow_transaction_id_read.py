"""Which transaction a row became is read by its unique key (imports.selectors), not stored."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('imports', '0001_initial'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='importrow',
            name='transaction_id',
        ),
    ]
