from django.contrib import messages
from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation.accounts import forms, services
from annotation.accounts.models import Invitation

LOGIN_BACKEND = "django.contrib.auth.backends.ModelBackend"


@require_http_methods(["GET", "POST"])
def accept(request, token):
    """The link from the invitation e-mail: choose a user name and password, or join as yourself."""
    invitation = Invitation.objects.usable().select_related("project", "invited_by").filter(token=token).first()
    if invitation is None:
        return render(request, "accounts/invitation_invalid.html", status=404)
    signed_in = request.user.is_authenticated
    form = None if signed_in else forms.AcceptInvitationForm(request.POST or None)
    if request.method == "POST" and (signed_in or form.is_valid()):
        try:
            user = accept_with(request, invitation, form)
        except ValidationError as error:
            return render_accept(request, invitation, form, error)
        login(request, user, backend=LOGIN_BACKEND)
        messages.success(request, f"Welcome to {invitation.project.name}.")
        return redirect("home")
    return render_accept(request, invitation, form)


def accept_with(request, invitation, form):
    if form is None:
        return services.accept_invitation(invitation=invitation, user=request.user)
    data = form.cleaned_data
    return services.accept_invitation(invitation=invitation, username=data["username"], password=data["password"])


def render_accept(request, invitation, form, error=None):
    if error is not None and form is not None:
        form.add_error(None, error)
    errors = error.messages if error is not None and form is None else []
    context = {"invitation": invitation, "form": form, "errors": errors}
    return render(request, "accounts/accept.html", context, status=400 if error else 200)
