"""Per-endpoint concurrency and requests-per-minute limits that hold across workers.

With REDIS_URL set, both live in Redis and are checked atomically by Lua scripts, so any
number of workers on any number of machines share them:
- concurrency: a sorted set of slot tokens scored by their expiry; a crashed worker's slot
  expires by itself (after the endpoint's timeout plus a margin) instead of leaking forever;
- rate: a sorted set of request times over the last 60 s (a sliding window).

Without Redis (the embedded default, one worker process) the same rules are kept in memory,
which is exact for that one process and says so: it does not coordinate several workers.

`acquire` never blocks: it returns a slot token, or the number of seconds to wait, so that the
Celery task can retry later and free its worker meanwhile.
"""

import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass

from django.conf import settings

# The rate window is 60 s plus a guard: a request is counted when its slot is taken, a moment
# before it reaches the server, so a window of exactly 60 s let the server see rpm + a few.
WINDOW = 61.0
SLOT_MARGIN = 5.0  # a slot outlives its request's timeout by this much before it is reclaimed

BUSY_HINT = 0.2  # seconds to wait for a concurrency slot: requests end at any moment

ACQUIRE = """
local slots, rate = KEYS[1], KEYS[2]
local now, expires, token = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local max_slots, rpm, window = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local BUSY_HINT = tonumber(ARGV[7])
redis.call('ZREMRANGEBYSCORE', slots, '-inf', now)
redis.call('ZREMRANGEBYSCORE', rate, '-inf', now - window)
if redis.call('ZCARD', slots) >= max_slots then
  local soonest = redis.call('ZRANGE', slots, 0, 0, 'WITHSCORES')
  return {0, tostring(math.min(tonumber(soonest[2]) - now, BUSY_HINT))}
end
if redis.call('ZCARD', rate) >= rpm then
  local oldest = redis.call('ZRANGE', rate, 0, 0, 'WITHSCORES')
  return {0, tostring(tonumber(oldest[2]) + window - now)}
end
redis.call('ZADD', slots, expires, token)
redis.call('ZADD', rate, now, token)
redis.call('EXPIRE', slots, math.ceil(expires - now) + 60)
redis.call('EXPIRE', rate, math.ceil(window) + 60)
return {1, token}
"""


@dataclass(frozen=True)
class Limits:
    key: str
    max_concurrency: int
    requests_per_minute: int
    slot_seconds: float


def limits_of(endpoint) -> Limits:
    return Limits(
        # The creation time keeps a recreated endpoint with a reused id off an old one's counters.
        key=f"attest:llm:endpoint:{endpoint.pk}:{int(endpoint.created_at.timestamp())}",
        max_concurrency=endpoint.max_concurrency,
        requests_per_minute=endpoint.requests_per_minute,
        slot_seconds=endpoint.timeout_seconds + SLOT_MARGIN,
    )


class RedisLimiter:
    def __init__(self, url: str):
        import redis

        self.client = redis.Redis.from_url(url)
        self.script = self.client.register_script(ACQUIRE)

    def acquire(self, limits: Limits) -> tuple[str | None, float]:
        now = time.time()
        token = uuid.uuid4().hex
        ok, value = self.script(
            keys=[limits.key + ":slots", limits.key + ":rate"],
            args=[
                now,
                now + limits.slot_seconds,
                token,
                limits.max_concurrency,
                limits.requests_per_minute,
                WINDOW,
                BUSY_HINT,
            ],
        )
        value = value.decode() if isinstance(value, bytes) else value
        return (value, 0.0) if int(ok) == 1 else (None, max(float(value), 0.05))

    def release(self, limits: Limits, token: str) -> None:
        self.client.zrem(limits.key + ":slots", token)


class LocalLimiter:
    """The same rules in one process's memory (embedded mode: a single worker)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.slots: dict[str, dict[str, float]] = {}
        self.rates: dict[str, deque] = {}

    def acquire(self, limits: Limits) -> tuple[str | None, float]:
        now = time.time()
        with self.lock:
            slots = self.slots.setdefault(limits.key, {})
            for token, expires in list(slots.items()):
                if expires <= now:
                    del slots[token]
            rate = self.rates.setdefault(limits.key, deque())
            while rate and rate[0] <= now - WINDOW:
                rate.popleft()
            if len(slots) >= limits.max_concurrency:
                return None, max(min(min(slots.values()) - now, BUSY_HINT), 0.05)
            if len(rate) >= limits.requests_per_minute:
                return None, max(rate[0] + WINDOW - now, 0.05)
            token = uuid.uuid4().hex
            slots[token] = now + limits.slot_seconds
            rate.append(now)
            return token, 0.0

    def release(self, limits: Limits, token: str) -> None:
        with self.lock:
            self.slots.get(limits.key, {}).pop(token, None)


_limiter = None
_limiter_lock = threading.Lock()


def limiter():
    global _limiter
    with _limiter_lock:
        if _limiter is None:
            url = getattr(settings, "REDIS_URL", "")
            _limiter = RedisLimiter(url) if url else LocalLimiter()
        return _limiter
