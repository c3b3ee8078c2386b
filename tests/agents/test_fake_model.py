"""The fake model on its own (no agent CLI needed): each API streams the tool call first and the final
text once the tool's result is in the conversation, and every request is recorded."""

from __future__ import annotations

import http.client
import json
from typing import Any

from fake_model import FakeModel, Script


def post(model: FakeModel, path: str, body: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """The (event name, data) pairs of an SSE reply, or one (None, JSON) pair for a plain reply."""
    connection = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    raw = response.read().decode()
    connection.close()
    assert response.status == 200, raw
    if not response.getheader("Content-Type", "").startswith("text/event-stream"):
        return [(None, json.loads(raw))]
    events: list[tuple[str | None, Any]] = []
    for block in raw.strip().split("\n\n"):
        name = None
        data = ""
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
        events.append((name, data if data == "[DONE]" else json.loads(data)))
    return events


def test_anthropic_messages_stream_a_bash_call_then_the_final_text() -> None:
    with FakeModel() as model:
        tools = [{"name": "Read", "input_schema": {}}, {"name": "Bash", "input_schema": {}}]
        first = post(model, "/v1/messages?beta=true", {"model": "m", "stream": True, "tools": tools,
                                                        "messages": [{"role": "user", "content": "hi"}]})
        names = [name for name, _ in first]
        assert names[0] == "message_start" and names[-1] == "message_stop"
        start = next(data for name, data in first if name == "content_block_start")
        assert start["content_block"]["type"] == "tool_use" and start["content_block"]["name"] == "Bash"
        delta = next(data for name, data in first if name == "content_block_delta")
        assert json.loads(delta["delta"]["partial_json"])["command"] == "echo hello"
        assert next(data for name, data in first if name == "message_delta")["delta"]["stop_reason"] == "tool_use"

        result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "hello"}]}
        second = post(model, "/v1/messages", {"model": "m", "stream": True, "tools": tools, "messages": [result]})
        text = next(data for name, data in second if name == "content_block_delta")
        assert text["delta"] == {"type": "text_delta", "text": "All done: hello"}
        assert len(model.tool_requests()) == 2 and "tool_result" in model.tool_requests()[1].text()


def test_openai_responses_stream_an_exec_command_call_then_the_final_text() -> None:
    with FakeModel(Script(command="touch x", escalate=True, description="why")) as model:
        tools = [{"type": "function", "name": "exec_command"}]
        first = post(model, "/v1/responses", {"model": "m", "stream": True, "tools": tools, "input": []})
        assert [data["sequence_number"] for _, data in first] == list(range(len(first)))
        done = next(data for name, data in first if name == "response.output_item.done")["item"]
        assert done["type"] == "function_call" and done["name"] == "exec_command"
        assert json.loads(done["arguments"]) == {"cmd": "touch x", "sandbox_permissions": "require_escalated",
                                                 "justification": "why"}
        assert first[-1][0] == "response.completed" and first[-1][1]["response"]["status"] == "completed"

        output = {"type": "function_call_output", "call_id": done["call_id"], "output": "ok"}
        second = post(model, "/v1/responses", {"model": "m", "stream": True, "tools": tools, "input": [output]})
        message = next(data for name, data in second if name == "response.output_item.done")["item"]
        assert message["type"] == "message" and message["content"][0]["text"] == "All done: hello"


def test_chat_completions_stream_a_bash_call_then_text_and_answer_title_requests_with_text() -> None:
    with FakeModel() as model:
        tools = [{"type": "function", "function": {"name": "bash"}}]
        first = post(model, "/v1/chat/completions", {"model": "m", "stream": True, "tools": tools,
                                                     "messages": [{"role": "user", "content": "hi"}]})
        assert first[-1] == (None, "[DONE]")
        calls = [data["choices"][0]["delta"].get("tool_calls") for _, data in first[:-1] if data["choices"]]
        assert calls[0][0]["function"]["name"] == "bash"
        assert json.loads(calls[1][0]["function"]["arguments"])["command"] == "echo hello"
        assert [data["choices"][0]["finish_reason"] for _, data in first[:-1] if data["choices"]][-1] == "tool_calls"

        title = post(model, "/v1/chat/completions", {"model": "m", "stream": False,
                                                     "messages": [{"role": "user", "content": "title?"}]})
        assert title[0][1]["choices"][0]["message"]["content"] == "All done: hello"
        back = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c", "content": "hello"}]
        second = post(model, "/v1/chat/completions", {"model": "m", "stream": True, "tools": tools, "messages": back})
        text = "".join(data["choices"][0]["delta"].get("content") or "" for _, data in second[:-1] if data["choices"])
        assert text == "All done: hello"
        assert len(model.model_requests()) == 3 and len(model.tool_requests()) == 2


def test_gemini_stream_a_run_shell_command_call_then_the_final_text_and_json_side_requests() -> None:
    with FakeModel() as model:
        tools = [{"functionDeclarations": [{"name": "read_file"}, {"name": "run_shell_command"}]}]
        ask = {"role": "user", "parts": [{"text": "run echo hello"}]}
        path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        [(_, first)] = post(model, path, {"contents": [ask], "tools": tools})
        assert first["candidates"][0]["content"]["parts"] == [
            {"functionCall": {"name": "run_shell_command", "args": {"command": "echo hello",
                                                                    "description": "Print hello"}}}]
        result = {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "id": "x",
                                                                  "response": {"output": "hello"}}}]}
        [(_, second)] = post(model, path, {"contents": [ask, first["candidates"][0]["content"], result],
                                           "tools": tools})
        assert second["candidates"][0]["content"]["parts"] == [{"text": "All done: hello"}]
        schema = {"type": "OBJECT", "properties": {"complexity_reasoning": {"type": "STRING"},
                                                   "complexity_score": {"type": "INTEGER", "minimum": 1}}}
        [(_, routed)] = post(model, "/v1beta/models/gemini-3.5-flash-lite:generateContent", {
            "contents": [ask], "generationConfig": {"responseMimeType": "application/json",
                                                    "responseJsonSchema": schema}})
        assert json.loads(routed["candidates"][0]["content"]["parts"][0]["text"]) == {
            "complexity_reasoning": "simple", "complexity_score": 1}
        assert len(model.model_requests()) == 3 and len(model.tool_requests()) == 2


def test_chat_completions_offer_qwen_its_run_shell_command() -> None:
    with FakeModel() as model:
        tools = [{"type": "function", "function": {"name": "run_shell_command"}}]
        first = post(model, "/v1/chat/completions", {"model": "m", "stream": True, "tools": tools,
                                                     "messages": [{"role": "user", "content": "hi"}]})
        calls = [data["choices"][0]["delta"].get("tool_calls") for _, data in first[:-1] if data["choices"]]
        assert calls[0][0]["function"]["name"] == "run_shell_command"
