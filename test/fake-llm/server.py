#!/usr/bin/env python3
"""A scripted LLM chat server for gptel-scope's session tests (stdlib only).

It speaks the four wire formats gptel's backends use, each streamed and
not streamed:

  OpenAI     POST /v1/chat/completions                       SSE ("data: ...", "[DONE]")
  Anthropic  POST /v1/messages                               SSE ("event: ...", "data: ...")
  Gemini     POST /v1beta/models/MODEL:generateContent
             POST /v1beta/models/MODEL:streamGenerateContent a JSON array, or SSE with ?alt=sse
  Ollama     POST /api/chat                                  NDJSON

Each request is answered from a script, a JSON file of turns (see README.md
beside this file): request N gets turn N, which may emit tool calls (several
in one response) and text.  Before answering, the tool results gptel sent
back are found in the request's history (by tool call id where the format
has ids, by position where it has none) and the turn's checks are run on
them.  Every check's outcome, every request and every protocol error is
written to the log file (--log) after each request, and served at GET /log.

The server listens on a loopback address only and answers loopback clients
only.  It prints "PORT <n>" on its first line of output, and exits by
itself after --timeout seconds without a request, after --lifetime seconds
in all, or when its standard input closes (--exit-on-eof).
"""

import argparse
import ipaddress
import json
import os
import re
import sys
import tempfile
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ID_PREFIX = {"openai": "call_", "anthropic": "toolu_", "gemini": "", "ollama": ""}


def strict_equal(a, b):
    """JSON equality where true is not 1 and 1 is not 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def dumps(obj):
    """JSON text with non-ASCII characters as they are (UTF-8 on the wire)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def split_text(text, pieces=3):
    """TEXT cut in up to PIECES parts (at least one), as a stream sends it."""
    if not text:
        return [text]
    size = max(1, -(-len(text) // pieces))
    return [text[i:i + size] for i in range(0, len(text), size)]


class Session:
    """The script, where it is, and the log of what happened."""

    def __init__(self, script, log_file):
        self.lock = threading.Lock()
        self.turns = script["turns"]
        self.model = script.get("model", "test-model")
        self.log_file = log_file
        self.served = 0
        self.requests = []
        self.checks = []
        self.errors = []
        # The turns that emit tool calls, in order: the k-th assistant message
        # with tool calls in a request's history is the k-th of these.
        self.call_turns = [i for i, t in enumerate(self.turns) if t.get("calls")]
        self.expected_checks = sum(len(t.get("checks", [])) for t in self.turns) + sum(
            len(self.turns[i]["calls"]) for i in self.call_turns if i + 1 < len(self.turns))

    def snapshot(self):
        return {
            "requests": self.requests,
            "checks": self.checks,
            "errors": self.errors,
            "served": self.served,
            "turns": len(self.turns),
            "finished": self.served == len(self.turns),
            "expected_checks": self.expected_checks,
            "passed": sum(1 for c in self.checks if c["pass"]),
            "failed": sum(1 for c in self.checks if not c["pass"]),
        }

    def write_log(self):
        if not self.log_file:
            return
        data = dumps(self.snapshot()).encode("utf-8")
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(self.log_file)),
                                   prefix=".fake-llm-log-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, self.log_file)

    def record(self, turn, call, check, ok, got=None):
        self.checks.append({"turn": turn, "call": call, "check": check, "pass": bool(ok),
                            "got": None if got is None else got[:4000]})


# ---------------------------------------------------------------- history

def text_of(content):
    """The text of a tool result's content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return json.dumps(content, ensure_ascii=False)


def exchanges(fmt, body):
    """The tool exchanges of a request's history, oldest first.

    Each is (CALLS, RESULTS): CALLS the (wire id or None, name) the assistant
    made, RESULTS the (wire id or None, text) that came back for them."""
    out = []
    if fmt == "openai":
        for m in body.get("messages", []):
            if m.get("role") == "assistant" and m.get("tool_calls"):
                out.append(([(c.get("id"), (c.get("function") or {}).get("name"))
                             for c in m["tool_calls"]], []))
            elif m.get("role") == "tool" and out:
                out[-1][1].append((m.get("tool_call_id"), text_of(m.get("content"))))
    elif fmt == "anthropic":
        for m in body.get("messages", []):
            content = m.get("content")
            if not isinstance(content, list):
                continue
            if m.get("role") == "assistant":
                calls = [(b.get("id"), b.get("name")) for b in content if b.get("type") == "tool_use"]
                if calls:
                    out.append((calls, []))
            elif m.get("role") == "user" and out:
                for b in content:
                    if b.get("type") == "tool_result":
                        out[-1][1].append((b.get("tool_use_id"), text_of(b.get("content"))))
    elif fmt == "gemini":
        for c in body.get("contents", []):
            parts = c.get("parts") or []
            if c.get("role") == "model":
                calls = [(None, p["functionCall"].get("name")) for p in parts if "functionCall" in p]
                if calls:
                    out.append((calls, []))
            elif c.get("role") == "user" and out:
                for p in parts:
                    if "functionResponse" in p:
                        r = p["functionResponse"]
                        content = (r.get("response") or {}).get("content")
                        out[-1][1].append((None, text_of(content), r.get("name")))
    elif fmt == "ollama":
        for m in body.get("messages", []):
            if m.get("role") == "assistant" and m.get("tool_calls"):
                out.append(([(None, (c.get("function") or {}).get("name")) for c in m["tool_calls"]], []))
            elif m.get("role") == "tool" and out:
                out[-1][1].append((None, text_of(m.get("content"))))
    return out


def results_by_id(session, fmt, body, turn):
    """Map the script's call ids to the result texts found in BODY."""
    found = {}
    prefix = ID_PREFIX[fmt]
    exs = exchanges(fmt, body)
    if len(exs) > len(session.call_turns):
        session.errors.append(f"request {turn}: {len(exs)} tool exchanges in the history, "
                              f"the script made {len(session.call_turns)}")
    for k, ex in enumerate(exs):
        if k >= len(session.call_turns):
            break
        calls = session.turns[session.call_turns[k]]["calls"]
        if all(wid is not None for wid, _ in ex[0]):
            # With ids the order is free (gptel echoes streamed calls reversed).
            echoed = sorted((wid, name) for wid, name in ex[0])
            made = sorted((wire_id(fmt, c["id"]), c["name"]) for c in calls)
        else:
            echoed = [name for _, name in ex[0]]
            made = [c["name"] for c in calls]
        if echoed != made:
            session.errors.append(f"request {turn}: tool exchange {k} echoes the calls {echoed}, "
                                  f"the script made {made}")
        for i, res in enumerate(ex[1]):
            rid, text = res[0], res[1]
            if rid is not None:
                sid = rid[len(prefix):] if rid.startswith(prefix) else rid
                if not any(c["id"] == sid for c in calls):
                    session.errors.append(f"request {turn}: a result names the unknown call id {rid}")
                    continue
            else:
                if i >= len(calls):
                    session.errors.append(f"request {turn}: more results than calls in exchange {k}")
                    continue
                sid = calls[i]["id"]
                if len(res) > 2 and res[2] is not None and res[2] != calls[i]["name"]:
                    session.errors.append(f"request {turn}: result {i} of exchange {k} is named "
                                          f"{res[2]}, the call was {calls[i]['name']}")
            if sid in found:
                session.errors.append(f"request {turn}: two results for the call {sid}")
            found[sid] = text
    return found


# ---------------------------------------------------------------- checks

def run_check(check, text):
    """Return (OK, DESCRIPTION) for CHECK on the result TEXT."""
    descs, ok = [], True

    def want(cond, desc):
        nonlocal ok
        descs.append(desc)
        ok = ok and bool(cond)

    for key in ("equals", "contains", "not_contains"):
        if key not in check:
            continue
        values = check[key] if isinstance(check[key], list) and key != "equals" else [check[key]]
        for v in values:
            if key == "equals":
                want(text == v, f"equals {dumps(v)}")
            elif key == "contains":
                want(v in text, f"contains {dumps(v)}")
            else:
                want(v not in text, f"does not contain {dumps(v)}")
    if any(k in check for k in ("json", "json_contains", "json_absent")):
        try:
            parsed = json.loads(text)
        except ValueError as e:
            return False, f"is JSON ({e})"
        if not isinstance(parsed, dict):
            return False, "is a JSON object"
        for k, v in check.get("json", {}).items():
            want(k in parsed and strict_equal(parsed[k], v), f"{k} = {dumps(v)}")
        for k, v in check.get("json_contains", {}).items():
            want(isinstance(parsed.get(k), str) and v in parsed[k], f"{k} contains {dumps(v)}")
        for k in check.get("json_absent", []):
            want(k not in parsed, f"{k} absent")
    return ok, "; ".join(descs) or "(no condition)"


# ---------------------------------------------------------------- responses

def wire_id(fmt, sid):
    return ID_PREFIX[fmt] + sid


def openai_response(session, turn, n, stream):
    calls, text = turn.get("calls", []), turn.get("text")
    base = {"id": f"chatcmpl-{n}", "created": int(time.time()), "model": session.model,
            "system_fingerprint": "fp_fake"}
    usage = {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}
    finish = "tool_calls" if calls else "stop"
    if not stream:
        message = {"role": "assistant", "content": text, "refusal": None}
        if calls:
            message["tool_calls"] = [
                {"id": wire_id("openai", c["id"]), "type": "function",
                 "function": {"name": c["name"], "arguments": dumps(c.get("args", {}))}}
                for c in calls]
        body = dict(base, object="chat.completion",
                    choices=[{"index": 0, "message": message, "logprobs": None,
                              "finish_reason": finish}], usage=usage)
        return "application/json", [dumps(body)]
    base["object"] = "chat.completion.chunk"

    def chunk(delta, finish_reason=None):
        return "data: " + dumps(dict(base, choices=[{"index": 0, "delta": delta, "logprobs": None,
                                                      "finish_reason": finish_reason}])) + "\n\n"
    events = [chunk({"role": "assistant", "content": "" if text else None, "refusal": None})]
    for piece in split_text(text or "") if text else []:
        events.append(chunk({"content": piece}))
    for i, c in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": i, "id": wire_id("openai", c["id"]), "type": "function",
                                             "function": {"name": c["name"], "arguments": ""}}]}))
        for piece in split_text(dumps(c.get("args", {}))):
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    events.append(chunk({}, finish))
    events.append("data: " + dumps(dict(base, choices=[], usage=usage)) + "\n\n")
    events.append("data: [DONE]\n\n")
    return "text/event-stream; charset=utf-8", events


def anthropic_response(session, turn, n, stream):
    calls, text = turn.get("calls", []), turn.get("text")
    stop = "tool_use" if calls else "end_turn"
    blocks = ([{"type": "text", "text": text}] if text else []) + [
        {"type": "tool_use", "id": wire_id("anthropic", c["id"]), "name": c["name"],
         "input": c.get("args", {})} for c in calls]
    if not stream:
        body = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": session.model,
                "content": blocks, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 20, "output_tokens": 10}}
        return "application/json", [dumps(body)]

    def event(name, data):
        return f"event: {name}\ndata: {dumps(dict(type=name, **data))}\n\n"
    events = [event("message_start", {"message": {
        "id": f"msg_{n}", "type": "message", "role": "assistant", "model": session.model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        event("ping", {})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            events.append(event("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}}))
            for piece in split_text(b["text"]):
                events.append(event("content_block_delta",
                                    {"index": i, "delta": {"type": "text_delta", "text": piece}}))
        else:
            events.append(event("content_block_start", {"index": i, "content_block": {
                "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
            args = dumps(b["input"]) if b["input"] else ""
            for piece in split_text(args):
                events.append(event("content_block_delta",
                                    {"index": i, "delta": {"type": "input_json_delta", "partial_json": piece}}))
        events.append(event("content_block_stop", {"index": i}))
    events.append(event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                          "usage": {"output_tokens": 10}}))
    events.append(event("message_stop", {}))
    return "text/event-stream; charset=utf-8", events


def gemini_response(session, turn, n, stream, sse):
    calls, text = turn.get("calls", []), turn.get("text")
    usage = {"promptTokenCount": 20, "candidatesTokenCount": 10, "totalTokenCount": 30}
    call_parts = [{"functionCall": {"name": c["name"], "args": c.get("args", {})}} for c in calls]

    def candidate(parts, finish=None):
        cand = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            cand["finishReason"] = finish
        return cand
    if not stream:
        parts = ([{"text": text}] if text else []) + call_parts
        body = {"candidates": [candidate(parts, "STOP")], "usageMetadata": usage,
                "modelVersion": session.model, "responseId": f"resp-{n}"}
        return "application/json", [dumps(body)]
    chunks = [{"candidates": [candidate([{"text": piece}])], "modelVersion": session.model}
              for piece in (split_text(text) if text else [])]
    last = {"candidates": [candidate(call_parts or [{"text": ""}], "STOP")], "usageMetadata": usage,
            "modelVersion": session.model, "responseId": f"resp-{n}"}
    chunks.append(last)
    if sse:
        return "text/event-stream", ["data: " + dumps(c) + "\r\n\r\n" for c in chunks]
    # Without alt=sse the stream is one JSON array, written as it is made.
    pieces = []
    for i, c in enumerate(chunks):
        pieces.append(("[" if i == 0 else ",\r\n") + dumps(c))
    pieces.append("]")
    return "application/json; charset=UTF-8", pieces


def ollama_response(session, turn, n, stream):
    calls, text = turn.get("calls", []), turn.get("text")
    stamp = "2026-01-01T00:00:00.000000Z"
    tool_calls = [{"function": {"name": c["name"], "arguments": c.get("args", {})}} for c in calls]
    stats = {"done_reason": "stop", "done": True, "total_duration": 1000, "load_duration": 10,
             "prompt_eval_count": 20, "prompt_eval_duration": 100, "eval_count": 10, "eval_duration": 100}
    if not stream:
        message = {"role": "assistant", "content": text or ""}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return "application/json; charset=utf-8", [
            dumps(dict({"model": session.model, "created_at": stamp, "message": message}, **stats))]
    lines = [dumps({"model": session.model, "created_at": stamp,
                    "message": {"role": "assistant", "content": piece}, "done": False}) + "\n"
             for piece in (split_text(text) if text else [])]
    if tool_calls:
        lines.append(dumps({"model": session.model, "created_at": stamp,
                            "message": {"role": "assistant", "content": "", "tool_calls": tool_calls},
                            "done": False}) + "\n")
    lines.append(dumps(dict({"model": session.model, "created_at": stamp,
                             "message": {"role": "assistant", "content": ""}}, **stats)) + "\n")
    return "application/x-ndjson", lines


def error_body(fmt, message):
    if fmt == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    if fmt == "gemini":
        return {"error": {"code": 500, "message": message, "status": "INTERNAL"}}
    if fmt == "ollama":
        return {"error": message}
    return {"error": {"message": message, "type": "server_error", "param": None, "code": None}}


# ---------------------------------------------------------------- HTTP

GEMINI_PATH = re.compile(r"^/v1beta/models/([^/:]+):(generateContent|streamGenerateContent)$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1"

    def log_message(self, fmt, *args):  # quiet: the log file says what happened
        pass

    def loopback_client(self):
        try:
            return ipaddress.ip_address(self.client_address[0]).is_loopback
        except ValueError:
            return False

    def send_json(self, status, obj):
        data = dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def do_GET(self):
        self.server.touch()
        if not self.loopback_client():
            return self.send_json(403, {"error": "loopback clients only"})
        if self.path == "/log":
            with self.server.session.lock:
                return self.send_json(200, self.server.session.snapshot())
        return self.send_json(404, {"error": f"no such path {self.path}"})

    def do_POST(self):
        self.server.touch()
        if not self.loopback_client():
            return self.send_json(403, {"error": "loopback clients only"})
        path, _, query = self.path.partition("?")
        gemini = GEMINI_PATH.match(path)
        fmt = ("openai" if path == "/v1/chat/completions" else
               "anthropic" if path == "/v1/messages" else
               "ollama" if path == "/api/chat" else
               "gemini" if gemini else None)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        session = self.server.session
        with session.lock:
            n = len(session.requests)
            entry = {"n": n, "path": path, "query": query, "format": fmt}
            session.requests.append(entry)
            try:
                if fmt is None:
                    session.errors.append(f"request {n}: unknown path {self.path}")
                    return self.send_json(404, error_body("openai", f"no such path {path}"))
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    session.errors.append(f"request {n}: the body is not UTF-8 ({e})")
                    return self.send_json(400, error_body(fmt, "the request body is not UTF-8"))
                try:
                    body = json.loads(text)
                except ValueError as e:
                    session.errors.append(f"request {n}: the body is not JSON ({e})")
                    return self.send_json(400, error_body(fmt, "the request body is not JSON"))
                if fmt == "gemini":
                    stream = gemini.group(2) == "streamGenerateContent"
                    entry["model"] = gemini.group(1)
                else:
                    stream = body.get("stream") is True
                    entry["model"] = body.get("model")
                entry["stream"] = stream
                entry["tools"] = sorted(tool_names(fmt, body))
                if n >= len(session.turns):
                    session.errors.append(f"request {n}: the script has only {len(session.turns)} turns")
                    return self.send_json(500, error_body(fmt, "the script has no more turns"))
                turn = session.turns[n]
                try:
                    self.check_results(session, fmt, body, n)
                except Exception:  # a bug here must not look like a network failure
                    session.errors.append(f"request {n}: the server failed: {traceback.format_exc()}")
                    return self.send_json(500, error_body(fmt, "the fake server failed"))
                session.served += 1
                if fmt == "openai":
                    ctype, pieces = openai_response(session, turn, n, stream)
                elif fmt == "anthropic":
                    ctype, pieces = anthropic_response(session, turn, n, stream)
                elif fmt == "gemini":
                    ctype, pieces = gemini_response(session, turn, n, stream, "alt=sse" in query.split("&"))
                else:
                    ctype, pieces = ollama_response(session, turn, n, stream)
            finally:
                session.write_log()
        self.send_pieces(ctype, pieces, stream)

    def check_results(self, session, fmt, body, n):
        found = results_by_id(session, fmt, body, n)
        # Every call of the turn before must have its result in this request.
        if n > 0:
            for c in session.turns[n - 1].get("calls", []):
                session.record(n, c["id"], f"the result of {c['name']} call {c['id']} came back",
                               c["id"] in found, found.get(c["id"]))
        for check in session.turns[n].get("checks", []):
            cid = check["call"]
            if cid not in found:
                session.record(n, cid, f"result of call {cid}: no such result in the request", False)
                continue
            ok, desc = run_check(check, found[cid])
            session.record(n, cid, f"result of call {cid}: {desc}", ok, found[cid])

    def send_pieces(self, ctype, pieces, stream):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Connection", "close")
        if not stream:
            data = "".join(pieces).encode("utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in pieces:
                data = piece.encode("utf-8")
                # Each event goes out in two chunks, cut in its middle (inside a
                # UTF-8 sequence when it falls there), as networks deliver them.
                for part in (data[:len(data) // 2], data[len(data) // 2:]):
                    if part:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                        self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.close_connection = True


def tool_names(fmt, body):
    tools = body.get("tools") or []
    if fmt == "gemini":
        return [d.get("name") for t in tools for d in t.get("functionDeclarations", [])]
    if fmt == "anthropic":
        return [t.get("name") for t in tools]
    return [(t.get("function") or {}).get("name") for t in tools]


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, session):
        super().__init__(address, Handler)
        self.session = session
        self.last = time.monotonic()

    def touch(self):
        self.last = time.monotonic()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--script", required=True, help="the JSON file of turns")
    p.add_argument("--log", help="where to write the log (JSON) after each request")
    p.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="0 (default): any free port")
    p.add_argument("--timeout", type=float, default=60, help="exit after this many idle seconds")
    p.add_argument("--lifetime", type=float, default=600, help="exit after this many seconds")
    p.add_argument("--exit-on-eof", action="store_true", help="exit when standard input closes")
    a = p.parse_args()
    if not ipaddress.ip_address(a.host).is_loopback:
        p.error(f"{a.host} is not a loopback address")
    with open(a.script, encoding="utf-8") as f:
        session = Session(json.load(f), a.log)
    session.write_log()
    server = Server((a.host, a.port), session)
    print(f"PORT {server.server_address[1]}", flush=True)
    start = time.monotonic()

    def watchdog():
        while True:
            time.sleep(0.2)
            now = time.monotonic()
            if now - server.last > a.timeout or now - start > a.lifetime:
                os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()
    if a.exit_on_eof:
        def eof():
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)
        threading.Thread(target=eof, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
