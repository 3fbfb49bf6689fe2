"""SummEdits statistics (Table 8) and the per-domain benchmark export."""

urlpatterns = []
