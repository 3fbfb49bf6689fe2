"""A fake OpenAI-compatible server for tests and benchmarks: a real HTTP server on loopback that
speaks POST /v1/chat/completions and can be scripted to answer, delay, return 429 or 500,
truncate its body or return garbage.

    with FakeOpenAI(reply=lambda request: "yes") as server:
        endpoint.base_url = server.url   # http://127.0.0.1:PORT/v1

`reply(request)` gets the parsed JSON request and returns the text of the answer, or a
`Behaviour` for one of the faults. `script` (a list) is consumed first, one entry per request,
then `reply` answers. The server records every request, the peak number in flight and the
arrival times, so tests can check concurrency and rate limits from the outside.
"""

import contextlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Behaviour:
    kind: str  # "answer" | "status" | "truncate" | "garbage" | "hang"
    text: str = ""
    status: int = 200
    delay: float = 0.0
    retry_after: float | None = None


def answer(text: str, delay: float = 0.0) -> Behaviour:
    return Behaviour("answer", text=text, delay=delay)


def status(code: int, message: str = "scripted failure", retry_after: float | None = None) -> Behaviour:
    return Behaviour("status", text=message, status=code, retry_after=retry_after)


def truncate() -> Behaviour:
    return Behaviour("truncate")


def garbage() -> Behaviour:
    return Behaviour("garbage")


def hang(seconds: float) -> Behaviour:
    return Behaviour("hang", delay=seconds)


class FakeOpenAI:
    def __init__(self, reply=None, *, script=None, latency: float = 0.0, tokens_per_word: float = 1.3):
        self.reply = reply or (lambda request: "yes")
        self.script = list(script or [])
        self.latency = latency
        self.tokens_per_word = tokens_per_word
        self.requests: list[dict] = []
        self.arrivals: list[float] = []
        self.authorizations: list[str] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def next_behaviour(self, request: dict) -> Behaviour:
        with self.lock:
            scripted = self.script.pop(0) if self.script else None
        out = scripted if scripted is not None else self.reply(request)
        return out if isinstance(out, Behaviour) else answer(str(out))

    def handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    request = {}
                with fake.lock:
                    fake.requests.append(request)
                    fake.authorizations.append(self.headers.get("Authorization", ""))
                    fake.arrivals.append(time.monotonic())
                    fake.in_flight += 1
                    fake.peak_in_flight = max(fake.peak_in_flight, fake.in_flight)
                try:
                    self.respond(request)
                finally:
                    with fake.lock:
                        fake.in_flight -= 1

            def respond(self, request):
                if not self.path.endswith("/chat/completions"):
                    return self.send_json(404, {"error": {"message": f"no route {self.path}"}})
                behaviour = fake.next_behaviour(request)
                time.sleep(fake.latency + behaviour.delay)
                if behaviour.kind == "status":
                    headers = {"Retry-After": str(behaviour.retry_after)} if behaviour.retry_after else {}
                    return self.send_json(behaviour.status, {"error": {"message": behaviour.text}}, headers)
                if behaviour.kind == "garbage":
                    return self.send_raw(200, b"<html>this is not json", "text/html")
                body = completion(request, behaviour.text, fake.tokens_per_word)
                if behaviour.kind == "truncate":
                    raw = json.dumps(body).encode()
                    return self.send_raw(200, raw[: len(raw) // 2], "application/json", length=len(raw))
                return self.send_json(200, body)

            def send_json(self, code, body, headers=None):
                self.send_raw(code, json.dumps(body).encode(), "application/json", headers=headers)

            def send_raw(self, code, raw, content_type, headers=None, length=None):
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(length if length is not None else len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(raw)
                if length is not None:
                    self.close_connection = True

        return Handler


def completion(request: dict, text: str, tokens_per_word: float) -> dict:
    prompt_words = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": int(prompt_words * tokens_per_word),
            "completion_tokens": int(len(text.split()) * tokens_per_word),
            "total_tokens": int((prompt_words + len(text.split())) * tokens_per_word),
        },
    }
