"""A small OpenAI-compatible server that a test starts on localhost and scripts.

Each POST to /v1/chat/completions takes the next scripted reply: an answer (message content),
an HTTP error status, a body sent as it is (what a server that is not OpenAI-compatible
answers), or a delay before any of them. With nothing scripted it answers no changes.
Replies can be scripted for one response format only (`script_for("agent_memory_changes",
...)`), and a reply can wait on a gate the test opens, so a test holds a model "still working"
for as long as it needs, with no timing window. Every request body is kept, so a test can read
what the service sent.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    content: str = '{"changes": []}'
    status: int = 200
    delay: float = 0.0
    gate: threading.Event | None = None  # the reply waits until the test sets it
    started: threading.Event | None = None  # set when the request arrives
    raw: str | None = None  # the whole body sent as it is, in place of a chat completion
    content_type: str = "application/json"


def schema_of(body: dict[str, Any]) -> str:
    """The name of a request's `json_schema` response format ("" without one)."""
    form = body.get("response_format") or {}
    return str((form.get("json_schema") or {}).get("name", ""))


def changes(*items: dict[str, Any]) -> Reply:
    return Reply(content=json.dumps({"changes": list(items)}))


class OpenAIStub:
    """The scripted server; `url` is what OPENAI_BASE_URL points at."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.by_schema: dict[str, deque[Reply]] = {}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub.lock:
                    stub.requests.append(body)
                    queue = stub.by_schema.get(schema_of(body))
                    if queue:
                        reply = queue.popleft()
                    else:
                        reply = stub.replies.popleft() if stub.replies else Reply()
                if reply.started is not None:
                    reply.started.set()
                if reply.gate is not None:
                    reply.gate.wait(timeout=60)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.raw is not None:
                    self._send_bytes(200, reply.raw.encode(), reply.content_type)
                    return
                if reply.status != 200:
                    scripted = reply.content != Reply.content
                    message = reply.content if scripted else "scripted failure"
                    payload = {"error": {"message": message, "type": "server_error"}}
                    self._send(reply.status, payload)
                    return
                self._send(
                    200,
                    {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "stub"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": reply.content},
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_bytes(status, json.dumps(payload).encode(), "application/json")

            def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                # the service may have stopped waiting (a model timeout a test scripted)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def script(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def script_for(self, schema: str, *replies: Reply) -> None:
        """Replies for requests with this response format's name only."""
        with self.lock:
            self.by_schema.setdefault(schema, deque()).extend(replies)

    def requests_for(self, schema: str) -> list[dict[str, Any]]:
        with self.lock:
            return [body for body in self.requests if schema_of(body) == schema]

    def reset(self) -> None:
        with self.lock:
            self.replies.clear()
            self.by_schema.clear()
            self.requests.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
