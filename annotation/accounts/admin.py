from django.contrib import admin

from annotation.accounts.models import Invitation


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ["email", "project", "role", "invited_by", "created_at", "expires_at", "accepted_at"]
    list_filter = ["project", "role"]
    readonly_fields = ["token"]
