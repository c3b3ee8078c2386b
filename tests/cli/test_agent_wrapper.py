"""README's wrapper for an agent with no hooks (Amp, Aider): start a named custom session that
watches the wrapper's own pid, then ``exec`` the agent, so the session lives exactly as long as the agent."""

from __future__ import annotations

import os
import subprocess
import sys
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
    # The wrapper calls `lidguard` from PATH, as a user's does: this interpreter's, whatever PATH holds here
    # (a pyenv shim not yet rehashed does not find a console script just installed).
    bin_dir = lidguard.home / "bin"
    bin_dir.mkdir()
    (bin_dir / "lidguard").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m lidguard "$@"\n')
    (bin_dir / "lidguard").chmod(0o700)
    env = {**lidguard.env, "PATH": f"{bin_dir}{os.pathsep}{lidguard.env.get('PATH', '')}"}
    agent = subprocess.Popen([str(wrapper)], env=env, cwd=lidguard.home)
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
