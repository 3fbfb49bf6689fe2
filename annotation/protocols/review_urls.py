"""Expert review and error typing of TofuEval task 1 labels (App. F.4, G)."""

urlpatterns = []
