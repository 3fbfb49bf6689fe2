from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.llm.models import Endpoint


class Command(BaseCommand):
    help = "Add, change or list LLM endpoints (the key is read on the workers from the variable named by --key-env)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        add = sub.add_parser("add", help="add an endpoint, or change the one with this name")
        add.add_argument("name")
        add.add_argument("--offline", action="store_true", help="the offline baseline (no model, no URL)")
        add.add_argument("--base-url", default="")
        add.add_argument("--model", default="")
        add.add_argument("--key-env", default="", help="name of the environment variable holding the key")
        add.add_argument("--timeout", type=float, default=60.0)
        add.add_argument("--concurrency", type=int, default=4)
        add.add_argument("--rpm", type=int, default=60, help="requests per minute")
        add.add_argument("--price-in", type=Decimal, default=Decimal(0), help="USD per 1k input tokens")
        add.add_argument("--price-out", type=Decimal, default=Decimal(0), help="USD per 1k output tokens")
        sub.add_parser("list", help="list the endpoints")

    def handle(self, *args, **opts):
        if opts["action"] == "list":
            for e in Endpoint.objects.all():
                key = f"key ${e.key_env}{'' if e.has_key() else ' (not set here)'}" if e.key_env else "no key"
                where = "offline baseline" if e.is_baseline() else f"{e.model} at {e.base_url}"
                self.stdout.write(
                    f"{e.name}: {where}; {key}; concurrency {e.max_concurrency}, {e.requests_per_minute}/min"
                    f"{'' if e.is_active else '; switched off'}"
                )
            return
        endpoint = Endpoint.objects.filter(name=opts["name"]).first() or Endpoint(name=opts["name"])
        endpoint.kind = Endpoint.Kind.OFFLINE if opts["offline"] else Endpoint.Kind.OPENAI
        endpoint.base_url, endpoint.model, endpoint.key_env = opts["base_url"], opts["model"], opts["key_env"]
        endpoint.timeout_seconds, endpoint.max_concurrency = opts["timeout"], opts["concurrency"]
        endpoint.requests_per_minute = opts["rpm"]
        endpoint.price_input_per_1k, endpoint.price_output_per_1k = opts["price_in"], opts["price_out"]
        try:
            endpoint.full_clean()
        except ValidationError as error:
            problems = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in error.message_dict.items())
            raise CommandError(problems) from error
        created = endpoint.pk is None
        endpoint.save()
        self.stdout.write(f"{'Added' if created else 'Changed'} endpoint {endpoint.name}.")
