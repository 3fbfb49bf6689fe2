app_name = "projects"
urlpatterns = []
