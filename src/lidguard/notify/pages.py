"""The Jinja2 templates of the pages (kept in the package as strings: no package-data to ship)."""

from __future__ import annotations

from typing import Any

from ..l10n import N_

__all__ = ["EVENT_TITLES", "SCRIPT_WORDS", "TEMPLATES", "environment", "event_title", "folder_name",
           "page_language"]

BASE = """<!doctype html>
<html lang="{{ lang }}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{% block title %}{{ _("LidGuard notifications") }}{% endblock %}</title>
{% if csrf %}<meta name="csrf-token" content="{{ csrf }}">{% endif %}
<link rel="stylesheet" href="/static/app.css">
<script src="/static/theme.js"></script>
<script src="/static/app.js" defer></script>
</head><body data-words='{{ words|tojson }}'>
<header class="top"><a class="brand" href="/">LidGuard</a>
<nav>{% if signed_in %}<a href="/">{{ _("Dashboard") }}</a><a href="/events">{{ _("Events") }}</a>{% endif %}
<button type="button" class="quiet" id="theme-toggle" aria-label="{{ _("Switch light or dark theme") }}" hidden>{{
 _("Theme") }}</button>
{% if signed_in %}<form method="post" action="/logout"><input type="hidden" name="csrf" value="{{ csrf }}">
<button type="submit" class="quiet" id="logout-button">{{ _("Sign out") }}</button></form>{% endif %}</nav></header>
<main>{% block content %}{% endblock %}</main>
</body></html>
"""

LOGIN = """{% extends "base.html" %}{% block title %}{{ _("Sign in - LidGuard notifications") }}{% endblock %}
{% block content %}<h1>{{ _("LidGuard notifications") }}</h1>
<div class="card">
{% if error %}<p class="error" id="login-error">{{ error }}</p>{% endif %}
<form method="post" action="/login">
<input type="hidden" name="csrf" value="{{ login_csrf }}">
<input type="hidden" name="returnUrl" value="{{ return_url }}">
<label for="access-token">{{ _("Access token") }}</label>
<input type="password" name="accessToken" id="access-token" autocomplete="current-password" required autofocus>
<button type="submit" id="login-button" class="wide primary">{{ _("Sign in") }}</button>
</form></div>{% endblock %}
"""

# The dashboard at a cafe table, laptop in the bag: what waits for an answer first, each a card with a live
# countdown and the three answers; then what happened lately; the subscription as one line.
DASHBOARD = """{% extends "base.html" %}{% block content %}<h1>LidGuard</h1>
{% if ready %}<p class="card readiness {{ 'ok' if ready.safe else 'not-yet' }}" id="readiness">{{
 ready.text }}</p>{% endif %}
<section aria-labelledby="waiting-heading"><h2 id="waiting-heading">{{ _("Waiting for you") }}</h2>
{% for item in follow_ups %}<article class="card follow-up-card" id="card-{{ item.Id }}">
<h3>{{ _("{agent} finished - reply to continue").format(agent=agent_title(item.Provider, item.ProviderName)) }}</h3>
<p class="where">{% if item.WorkingDirectory %}{{ _("in") }} <code class="folder" title="{{ item.WorkingDirectory
 }}">{{ folder_name(item.WorkingDirectory) }}</code> - {% endif %}<span class="countdown" data-deadline="{{
 item.ExpiresAtUtc }}">{{ _("until") }} <time datetime="{{ item.ExpiresAtUtc }}">{{ item.ExpiresAtUtc
 }}</time></span></p>
{% if item.LastAssistantMessage %}<div class="message clamp" id="message-{{ item.Id }}">{{
 item.LastAssistantMessage }}</div>
<button type="button" class="more" data-target="message-{{ item.Id }}" hidden>{{ _("more") }}</button>{% endif %}
<div class="actions"><a class="button primary reply-link" href="/follow-ups/{{ item.Id }}">{{ _("Reply") }}</a>
<form method="post" action="/follow-ups/{{ item.Id }}/extend"><input type="hidden" name="csrf" value="{{ csrf }}">
<input type="hidden" name="seconds" value="300"><input type="hidden" name="back" value="dashboard">
<button type="submit" class="extend-card">{{ _("Extend 5 min") }}</button></form>
<form method="post" action="/follow-ups/{{ item.Id }}/cancel"><input type="hidden" name="csrf" value="{{ csrf }}">
<input type="hidden" name="back" value="dashboard">
<button type="submit" class="danger sleep-card">{{ _("Let it sleep") }}</button></form></div>
</article>{% else %}<p class="empty card" id="nothing-waiting">{{ _("Nothing is waiting for a reply.")
 }}</p>{% endfor %}
</section>
<section aria-labelledby="recent-heading"><h2 id="recent-heading">{{ _("Recent") }}</h2>
{% for event in events %}<article class="card event" data-event-type="{{ event.EventType }}">
<span class="what">{{ _(event_title(event.EventType, event.Reason)) }}</span>
<span class="when"><time class="relative" datetime="{{ event.ReceivedAtUtc }}">{{ event.ReceivedAtUtc }}</time></span>
<span class="detail">{% if event.Provider %}{{ agent_title(event.Provider, event.ProviderName) }}{% endif %}{%
 if event.SessionIdentifier %} <code>{{ event.SessionIdentifier }}</code>{% endif %}{%
 if event.PermanentFailures or event.TransientFailures %} <span class="badge bad">{{
 _("not delivered to {count}").format(count=event.PermanentFailures + event.TransientFailures) }}</span>{%
 elif event.Succeeded %} <span class="badge">{{
 _("sent to {count}").format(count=event.Succeeded) }}</span>{% endif %}</span>
</article>{% else %}<p class="empty">{{ _("No events yet.") }}</p>{% endfor %}
<p><a href="/events">{{ _("All events") }}</a></p></section>
<section aria-labelledby="push-heading"><h2 id="push-heading">{{ _("This browser") }}</h2>
<div class="card line"><p id="push-line"><span id="active-subscriptions">{{ counts.ActiveSubscriptions
 }}</span> {{ _("browser(s) get notifications.") }} <span id="push-status" role="status"></span></p>
<button type="button" class="primary" id="subscribe-button">{{ _("Turn on notifications") }}</button>
<button type="button" id="unsubscribe-button" hidden>{{ _("Turn off") }}</button></div></section>
<section aria-labelledby="webhook-heading"><h2 id="webhook-heading">{{ _("Webhook URL for") }} <code>lidguard
 settings</code></h2>
<p class="meta">{{ _("Post-stop, pre-suspend and session-end webhooks, and the closed-lid stop follow-up webhook:")
 }}</p>
<pre id="webhook-url">{{ webhook_url }}</pre></section>
{% endblock %}
"""

EVENTS = """{% extends "base.html" %}{% block title %}{{ _("Events - LidGuard notifications") }}{% endblock %}
{% block content %}<h1>{{ _("Latest events") }}</h1>
<div class="table card"><table id="events"><thead><tr><th>{{ _("Received") }}</th><th>{{ _("Event") }}</th><th>{{
 _("Reason") }}</th><th>{{ _("Session") }}</th><th>{{ _("Status") }}</th><th>{{
 _("Deliveries (ok / permanent / transient)") }}</th><th>{{ _("Last error") }}</th></tr></thead><tbody>
{% for event in events %}<tr><td><time datetime="{{ event.ReceivedAtUtc }}">{{ event.ReceivedAtUtc }}</time></td>
<td>{% if event.FollowUpId %}<a href="/follow-ups/{{ event.FollowUpId }}">{{ event.EventType }}</a>
{% else %}{{ event.EventType }}{% endif %}</td><td>{{ event.Reason or "" }}</td>
<td>{{ event.Provider or "" }}{% if event.ProviderName %}:{{ event.ProviderName }}{% endif %}
 {{ event.SessionIdentifier or "" }}</td><td>{{ event.Status }}</td>
<td>{{ event.Succeeded }} / {{ event.PermanentFailures }} / {{ event.TransientFailures }}</td>
<td>{{ event.LastError or "" }}</td></tr>{% else %}<tr><td colspan="7">{{ _("No events yet.") }}</td></tr>{% endfor %}
</tbody></table></div>{% endblock %}
"""

# Phone first (checked at 390x844 in tests/notify/test_notify_phone.py and test_notify_faces.py): the
# question, the status and deadline, the last assistant message, the reply box and thumb-sized buttons;
# the details below them. Works without JavaScript (plain forms); the script adds the live countdown and
# the growing reply box.
FOLLOW_UP = """{% extends "base.html" %}{% block title %}{{ _("Reply - LidGuard notifications") }}{% endblock %}
{% block content %}<h1>{{ title }}</h1>
<div id="follow-up" class="card{% if item.Status == 'Replied' %} sent{% endif %}" data-id="{{ item.Id }}"
 data-status="{{ item.Status }}">
{% if item.Status == "Replied" %}<p class="status-line" id="sent-state">{{ _("Sent - the agent continues.") }}</p>{%
 endif %}
<p class="meta">{{ _("Status:") }} <span class="status" id="status">{{ item.Status }}</span>{% if item.Reply %}{{
 _(" - reply sent") }}{% endif %}. {{ _("Deadline:") }} <time id="deadline" datetime="{{ item.ExpiresAtUtc }}">{{
 item.ExpiresAtUtc }}</time>
 (<span id="countdown" class="countdown"></span>; {{ _("at most") }} <time datetime="{{ cap }}">{{ cap }}</time>)</p>
{% if message %}<p class="error" id="action-message">{{ message }}</p>{% endif %}
<h2>{{ _("Last assistant message") }}</h2><pre id="last-message">{{ item.LastAssistantMessage or "" }}</pre>
{% if item.Status == "Pending" %}
<form method="post" action="/follow-ups/{{ item.Id }}/reply">
<input type="hidden" name="csrf" value="{{ csrf }}">
<label for="reply-text">{{ _("Reply to continue") }}</label>
<textarea name="text" id="reply-text" maxlength="{{ max_reply }}" rows="4" required></textarea>
<button type="submit" id="reply-button" class="wide primary">{{ _("Send") }}</button></form>
<div class="actions">
<form method="post" action="/follow-ups/{{ item.Id }}/extend">
<input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="seconds" value="300">
<button type="submit" id="extend-button">{{ _("Extend 5 min") }}</button></form>
<form method="post" action="/follow-ups/{{ item.Id }}/cancel">
<input type="hidden" name="csrf" value="{{ csrf }}">
<button type="submit" id="sleep-button" class="danger">{{ _("Let it sleep") }}</button></form></div>
{% elif item.Reply %}<h2>{{ _("Your reply") }}</h2><pre id="reply">{{ item.Reply }}</pre>{% endif %}</div>
<h2>{{ _("Your prompt") }}</h2><pre id="prompt-preview">{{ item.InputPromptPreview or "" }}</pre>
<p class="meta">{{ _("Session") }} <code id="session-identifier">{{ item.SessionIdentifier }}</code>{%
 if item.WorkingDirectory %} {{ _("in") }} <code id="working-directory">{{ item.WorkingDirectory }}</code>{%
 endif %}.</p>
{% endblock %}
"""

# The dashboard's card titles per webhook event (anything newer shows its own type name).
EVENT_TITLES = {("PreSuspend", "Completed"): N_("Going to sleep: every agent is done"),
                ("PreSuspend", "SoftLocked"): N_("Going to sleep: the agents wait for input"),
                ("PreSuspend", "EmergencyHibernation"): N_("Emergency hibernation: the closed laptop is too hot"),
                ("PostSessionEnd", None): N_("An agent session ended"),
                ("StopFollowUp", None): N_("An agent asked before sleep"),
                ("SuspendBlocked", None): N_("Sleep blocked by another program")}


def event_title(event_type: str | None, reason: str | None) -> str:
    kind = event_type or ""
    return EVENT_TITLES.get((kind, reason), EVENT_TITLES.get((kind, None), kind or N_("Event")))


def folder_name(path: str) -> str:
    """The project folder's own name (the card shows the full path on hover)."""
    trimmed = path.rstrip("/\\")
    return trimmed.replace("\\", "/").rsplit("/", 1)[-1] or path


TEMPLATES = {"base.html": BASE, "login.html": LOGIN, "dashboard.html": DASHBOARD, "events.html": EVENTS,
             "follow_up.html": FOLLOW_UP}


def environment() -> Any:
    import jinja2

    from .events import provider_title

    env = jinja2.Environment(loader=jinja2.DictLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined)
    env.globals.update(agent_title=provider_title, event_title=event_title, folder_name=folder_name,
                       _=_english, lang="en", words={})  # a page passes the request's language (notify/app.py)
    return env


def _english(message: str) -> str:
    return message


# The words app.js shows (the page hands them over translated in ``<body data-words>``).
SCRIPT_WORDS = (N_("{seconds} s left"), N_("deadline passed"), N_("{minutes} min {seconds} s left"),
                N_("just now"), N_("{minutes} min ago"), N_("{hours} h ago"), N_("less"), N_("more"),
                N_("Light"), N_("Dark"), N_("This browser cannot receive Web Push (it needs https or localhost)."),
                N_("Subscribing..."), N_("Notifications are not allowed for this site."),
                N_("This browser is subscribed."), N_("The server refused: {status}"),
                N_("Subscribing failed: {error}"), N_("This browser is not subscribed."),
                N_("This browser is unsubscribed."), N_("Unsubscribing failed: {error}"),
                N_("{what} did not answer within {seconds} s"), N_("The service worker"), N_("The push service"))


def page_language(accept_language: str | None) -> tuple[str, Any, dict[str, str]]:
    """(culture, gettext, app.js's words) for a request's ``Accept-Language``."""
    from ..l10n import negotiate, translation

    culture = negotiate(accept_language)
    if culture == "en":
        return culture, _english, {}
    translate = translation(culture).gettext
    return culture, translate, {word: translate(word) for word in SCRIPT_WORDS}
