"""Rating LLM judges' explanations (SummEdits App. B, TofuEval App. H)."""

urlpatterns = []
