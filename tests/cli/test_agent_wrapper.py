"""README's wrapper for an agent with no hooks (Amp, Aider, Crush): start a named custom session that
watches the wrapper's own pid, then ``exec`` the agent, so the session lives exactly as long as the agent."""

from __future__ import annotations

import subprocess
import textwrap


def test_a_wrapper_names_its_session_and_the_agents_exit_ends_it(lidguard):
    wrapper = lidguard.home / "amp-guarded"
    # README "Agents with no hooks": `sleep` stands in for the agent the wrapper execs.
    wrapper.write_text(textwrap.dedent("""\
        #!/bin/sh
        lidguard start --provider custom --provider-name Amp --parent-pid $$ >/dev/null || true
        exec sleep 60
        """))
    wrapper.chmod(0o700)
    agent = subprocess.Popen([str(wrapper)], env=lidguard.env, cwd=lidguard.home)
    try:
        assert lidguard.wait_until(lambda: lidguard.json("status")["activeSessionCount"] == 1)
        [session] = lidguard.json("status")["sessions"]
        assert session["watchedProcessIdentifier"] == agent.pid  # the agent itself, after the exec
        assert session["providerName"] == "Amp"
        assert f"Custom:Amp:{lidguard.home}" in lidguard.run("status", check=True).stdout
    finally:
        agent.kill()
        agent.wait()
    assert lidguard.wait_until(lambda: lidguard.json("status")["activeSessionCount"] == 0)
