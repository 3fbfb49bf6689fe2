"""Ambiguity adjudication (experts: reviewers and leads) and statistics (leads and viewers)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotation.projects.decorators import project_view
from annotation.projects.models import Membership
from annotation.protocols import ambiguity, ambiguity_results
from annotation.protocols.models import Campaign, Item, Protocol


def _campaign(project, pk) -> Campaign:
    return get_object_or_404(Campaign, project=project, pk=pk, protocol=Protocol.AMBIGUITY)


@require_http_methods(["GET", "POST"])
@project_view(Membership.can_review)
def adjudicate(request, project, membership, pk):
    """Both annotators' answers side by side; the expert records the final label, type and a note.

    GET shows the first item of the queue (disagreements first), or `?item=<pk>` to revisit one;
    POST carries the version the expert saw, so a decision made meanwhile by someone else is shown,
    never overwritten."""
    campaign = _campaign(project, pk)
    queue = ambiguity.queue(campaign)
    source = request.POST if request.method == "POST" else request.GET
    item_pk = source.get("item", "")
    if item_pk:
        item = get_object_or_404(
            Item.objects.select_related("sentence__summary", "document", "campaign"),
            campaign=campaign,
            pk=int(item_pk) if item_pk.isdigit() else 0,
            sentence__isnull=False,
        )
    else:
        item = queue[0] if queue else None
    errors, form = {}, {}
    status = 200
    if request.method == "POST" and item is not None:
        form = {k: request.POST.get(k, "") for k in ("ambiguous", "type", "note")}
        version = request.POST.get("version", "")
        try:
            ambiguity.adjudicate(
                item=item,
                ambiguous=form["ambiguous"],
                type_code=form["type"],
                note=form["note"][:5000],
                expert=request.user,
                expected_version=int(version) if version.isdigit() else -1,
            )
        except ambiguity.AdjudicationConflict:
            errors["__all__"] = (
                "Another expert decided this sentence after you opened it; their decision is shown below. "
                "Your choice is kept in the form: submit again to replace theirs."
            )
            status = 409
        except ValidationError as error:
            errors = {k: v[0] for k, v in error.message_dict.items()} if hasattr(error, "error_dict") else {}
            errors = errors or {"__all__": " ".join(error.messages)}
            status = 400
        else:
            messages.success(request, f"Adjudicated sentence {item.key}.")
            return redirect("protocols:ambiguity_adjudicate", slug=project.slug, pk=campaign.pk)
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "item": item,
        "remaining": len(queue),
        "errors": errors,
        "status_code": status,
    }
    if item is not None:
        decided = ambiguity.final(item)
        given = ambiguity.answers(item)
        taxonomy = ambiguity.taxonomy_of(campaign)
        codes = ambiguity.leaf_codes(taxonomy)
        for answer in given:
            answer.type_names = [codes[c].name if c in codes else c for c in answer.types]
        first = given[0] if given else None
        form = form or {
            "ambiguous": ("yes" if decided["ambiguous"] else "no") if decided else "",
            "type": decided.get("type", "") if decided else "",
            "note": decided.get("note", "") if decided else "",
        }
        if not form["ambiguous"] and first and len({a.ambiguous for a in given}) == 1:
            form["ambiguous"] = "yes" if first.ambiguous else "no"  # a starting point when they agree
        context.update(
            {
                "document": item.document,
                "context": ambiguity.in_context(item.sentence),
                "answers": given,
                "differ": len({(a.ambiguous, tuple(a.types)) for a in given}) > 1,
                "decided": decided,
                "categories": ambiguity.tree(taxonomy),
                "taxonomy": taxonomy,
                "form": form,
                "version": decided.get("version", 0),
            }
        )
    return render(request, "protocols/ambiguity_adjudicate.html", context, status=status)


@require_GET
@project_view(Membership.can_read_dashboards)
def statistics(request, project, membership, pk):
    """MADISSE Table 2, Cohen's kappa, and ambiguity x consistency where the sentences have TofuEval labels."""
    campaign = _campaign(project, pk)
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "table": ambiguity_results.table2(campaign),
        "categories": ambiguity_results.CATEGORIES,
        "agreement": ambiguity_results.agreement(campaign),
        "crosstab": ambiguity_results.consistency_crosstab(campaign),
    }
    return render(request, "protocols/ambiguity_stats.html", context)
