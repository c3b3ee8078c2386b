"""`lidguard completion bash|zsh|fish`: completion scripts built from the argparse parser (commands,
their options, option choices). Only this command imports it; the hook path never does."""

from __future__ import annotations

import argparse

__all__ = ["completion_script"]


def _commands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, list[str], list[str]]]:
    """command -> (help, its --options, its positional choices)."""
    result: dict[str, tuple[str, list[str], list[str]]] = {}
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, sub in action.choices.items():
            if name in result:
                continue
            options = sorted({option for item in sub._actions for option in item.option_strings
                              if option.startswith("--")})
            choices = [str(choice) for item in sub._actions if not item.option_strings and item.choices
                       for choice in item.choices if not isinstance(item, argparse._SubParsersAction)]
            for item in sub._actions:  # nested subcommands (linux-permission status|install|...)
                if isinstance(item, argparse._SubParsersAction):
                    choices += list(item.choices)
            result[name] = (helps.get(name, ""), options, choices)
    return result


def _bash(commands: dict[str, tuple[str, list[str], list[str]]]) -> str:
    cases = "\n".join(f"        {name}) words=\"{' '.join(options + choices)}\" ;;"
                      for name, (_, options, choices) in commands.items())
    return f"""# bash completion for lidguard (lidguard completion bash)
_lidguard() {{
    local current=${{COMP_WORDS[COMP_CWORD]}} words
    if [ "$COMP_CWORD" -eq 1 ]; then
        words="help {' '.join(commands)}"
    else
        case "${{COMP_WORDS[1]}}" in
{cases}
        help) words="{' '.join(commands)}" ;;
        *) words="" ;;
        esac
    fi
    COMPREPLY=($(compgen -W "$words" -- "$current"))
}}
complete -F _lidguard lidguard
"""


def _zsh_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "'\\''").replace(":", "\\:")


def _zsh(commands: dict[str, tuple[str, list[str], list[str]]]) -> str:
    described = "\n".join(f"        '{name}:{_zsh_quote(help_text)}'" for name, (help_text, _, _) in commands.items())
    cases = "\n".join(f"        {name}) compadd -- {' '.join(options + choices)} ;;"
                      for name, (_, options, choices) in commands.items() if options or choices)
    return f"""#compdef lidguard
# zsh completion for lidguard (lidguard completion zsh > a folder on $fpath, as _lidguard)
_lidguard() {{
    local -a commands
    commands=(
{described}
    )
    if (( CURRENT == 2 )); then
        _describe 'lidguard command' commands
        return
    fi
    case ${{words[2]}} in
{cases}
        help) _describe 'lidguard command' commands ;;
    esac
}}
compdef _lidguard lidguard 2>/dev/null || true
"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish(commands: dict[str, tuple[str, list[str], list[str]]]) -> str:
    lines = ["# fish completion for lidguard (lidguard completion fish)", "complete -c lidguard -f",
             "complete -c lidguard -n __fish_use_subcommand -a help -d 'Show help for a command'"]
    for name, (help_text, options, choices) in commands.items():
        lines.append(f"complete -c lidguard -n __fish_use_subcommand -a {name} -d {_fish_quote(help_text)}")
        for option in options:
            lines.append(f"complete -c lidguard -n '__fish_seen_subcommand_from {name}' -l {option[2:]}")
        if choices:
            words = _fish_quote(" ".join(choices))
            lines.append(f"complete -c lidguard -n '__fish_seen_subcommand_from {name}' -a {words}")
    return "\n".join(lines) + "\n"


def completion_script(shell: str, parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](commands)
