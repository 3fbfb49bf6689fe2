import secrets

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.text import slugify

from annotation.projects import services
from annotation.projects.models import Project, Role


class Command(BaseCommand):
    help = "Give a user a role in a project (creating the project, and the user with --email, if missing)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--username", required=True)
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--email", help="create the user with this address if it does not exist")
        parser.add_argument("--name", help="the project's name, if it is created")

    @transaction.atomic
    def handle(self, *args, **opts):
        slug = opts["project"]
        if slugify(slug) != slug:
            raise CommandError(f"project slug {slug!r} must be lower-case letters, digits and hyphens")
        project, created = Project.objects.get_or_create(slug=slug, defaults={"name": opts["name"] or slug.title()})
        if created:
            self.stdout.write(f"created project {slug}")
        user = get_user_model().objects.filter(username=opts["username"]).first()
        if user is None:
            if not opts["email"]:
                raise CommandError(f"no user {opts['username']!r}; give --email to create one")
            password = secrets.token_urlsafe(12)
            user = get_user_model().objects.create_user(opts["username"], opts["email"], password)
            self.stdout.write(f"created user {user.username} with password {password} (change it after signing in)")
        try:
            membership = services.add_member(project=project, user=user, role=opts["role"])
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from None
        self.stdout.write(f"{user.username} is {membership.role} of {slug} (pseudonym {membership.pseudonym})")
