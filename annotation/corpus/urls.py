app_name = "corpus"
urlpatterns = []
