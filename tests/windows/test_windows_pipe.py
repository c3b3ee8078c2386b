"""The named-pipe transport: per-user pipe name, user-only DACL, server/client user checks."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from fake_winapi import USER_SID, FakeWindowsApi

from lidguard.ipc.transport import UntrustedPeer
from lidguard.ipc.transport_windows import NamedPipeListener, NamedPipeTransport, pipe_name_for, pipe_sddl_for

OTHER_SID = "S-1-5-21-1-2-3-500"


def echo(line: bytes) -> bytes:
    request = json.loads(line)
    return json.dumps({"v": 1, "Succeeded": True, "Message": request["Command"]}).encode() + b"\n"


def serve_once(api: FakeWindowsApi) -> tuple[NamedPipeListener, threading.Thread]:
    listener = NamedPipeListener(api)
    thread = threading.Thread(target=listener.serve_one, args=(echo,), daemon=True)
    thread.start()
    return listener, thread


def test_pipe_name_and_dacl_name_only_the_current_user():
    assert pipe_name_for(USER_SID) == "\\\\.\\pipe\\lidguard-" + USER_SID
    assert pipe_sddl_for(USER_SID) == f"O:{USER_SID}D:P(A;;GA;;;{USER_SID})"


def test_one_request_one_reply_through_the_pipe():
    api = FakeWindowsApi()
    listener, thread = serve_once(api)
    connection = NamedPipeTransport(api).connect(Path("unused"), 30.0)
    connection.verify_server()
    connection.send_all(b'{"v": 1, "Command": "status"}\n', None)
    reply = json.loads(connection.receive_line(1024, None))
    connection.close()
    thread.join(30)
    assert reply["Message"] == "status"
    [created] = [call for call in api.calls if call[0] == "CreateNamedPipeW"]
    assert created == ("CreateNamedPipeW", listener.name, pipe_sddl_for(USER_SID), True)
    assert "DisconnectNamedPipe" in api.names()


def test_the_client_refuses_a_server_of_another_user():
    api = FakeWindowsApi()
    api.process_sids[1111] = OTHER_SID
    _listener, thread = serve_once(api)
    connection = NamedPipeTransport(api).connect(Path("unused"), 30.0)
    with pytest.raises(UntrustedPeer, match=OTHER_SID):
        connection.verify_server()
    connection.send_all(b'{"Command": "x"}\n', None)  # let the listener finish
    connection.close()
    thread.join(30)


def test_the_listener_answers_another_user_with_a_refusal():
    api = FakeWindowsApi()
    api.process_sids[4242] = OTHER_SID
    _listener, thread = serve_once(api)
    connection = NamedPipeTransport(api).connect(Path("unused"), 30.0)
    connection.send_all(b'{"v": 1, "Command": "status"}\n', None)
    reply = json.loads(connection.receive_line(1024, None))
    thread.join(30)
    assert reply["Succeeded"] is False and "other users" in reply["Message"]


def test_nobody_listening_is_an_os_error_the_client_retries_on():
    with pytest.raises(OSError):
        NamedPipeTransport(FakeWindowsApi()).connect(Path("unused"), 0.01)


def test_serve_named_pipe_answers_on_the_event_loop_until_cancelled():
    import anyio

    from lidguard.platform.windows.pipe_server import serve_named_pipe

    api = FakeWindowsApi()
    answered: list[bytes] = []

    async def answer(line: bytes) -> bytes:
        answered.append(line)
        return b'{"v": 1, "Succeeded": true}'

    async def main() -> None:
        async with anyio.create_task_group() as group:
            name = await group.start(lambda task_status: serve_named_pipe(answer, api=api, task_status=task_status))
            assert name.endswith(USER_SID)

            def client() -> bytes:
                connection = NamedPipeTransport(api).connect(Path("unused"), 30.0)
                connection.verify_server()
                connection.send_all(b'{"v": 1, "Command": "status"}\n', None)
                try:
                    return connection.receive_line(1024, None)
                finally:
                    connection.close()

            reply = await anyio.to_thread.run_sync(client)
            assert json.loads(reply) == {"v": 1, "Succeeded": True}
            group.cancel_scope.cancel()

    anyio.run(main)
    assert answered == [b'{"v": 1, "Command": "status"}\n']  # the newline: a complete request
