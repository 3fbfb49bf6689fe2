from functools import wraps

DIRECTIVES = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy(**overrides: str) -> str:
    return "; ".join(f"{name} {value}" for name, value in (DIRECTIVES | overrides).items())


CSP = policy()


class ContentSecurityPolicyMiddleware:
    """A strict Content-Security-Policy on every response: no inline scripts or styles, so
    text that slipped through escaping still cannot run."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CSP)
        return response


def allow_inline_styles(view):
    """For third-party pages (Swagger UI) that set inline styles; scripts stay 'self' only."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response.headers["Content-Security-Policy"] = policy(**{"style-src": "'self' 'unsafe-inline'"})
        return response

    return wrapper
