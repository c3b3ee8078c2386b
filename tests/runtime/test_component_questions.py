"""The runtime puts each question (wants protection? busy? holds anything back? a state change) only to the
components with an answer of their own; the others keep ``ComponentBase``'s no-opinion answer, so leaving
them out changes no answer - and a component that does answer is never left out."""

from __future__ import annotations

import pytest
from lidguard_runtime_harness import Harness

from lidguard.runtime.components import ComponentBase

QUESTIONS = ("wants_protection", "busy", "holds_back_protection", "holds_back_suspend", "state_changed")


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_component_with_its_own_answer_is_asked_and_only_those(isolated_home, question: str) -> None:
    runtime = Harness().runtime
    own = [component for component in runtime.components
           if any(question in vars(cls) for cls in type(component).__mro__ if cls is not ComponentBase)]
    assert list(runtime.answering(question)) == own
    assert own, f"no component answers {question}: the grouping would hide a real answer"


def test_a_component_answering_on_its_instance_is_asked(isolated_home) -> None:
    """An answer set on the instance (not on its class) counts as the component's own."""
    from lidguard.runtime.app import _answers

    heartbeat = Harness().runtime.heartbeat
    assert not _answers(heartbeat, "holds_back_suspend")
    heartbeat.holds_back_suspend = lambda: "held"  # type: ignore[method-assign]
    assert _answers(heartbeat, "holds_back_suspend")
