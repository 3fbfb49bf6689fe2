from django.apps import AppConfig


class LlmConfig(AppConfig):
    name = "annotation.llm"
    label = "llm"
    verbose_name = "LLM endpoints, prompts and jobs"
