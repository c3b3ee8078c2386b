"""The Jinja2 templates of the pages (kept in the package as strings: no package-data to ship)."""

from __future__ import annotations

from typing import Any

__all__ = ["TEMPLATES", "environment"]

BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}LidGuard notifications{% endblock %}</title>
{% if csrf %}<meta name="csrf-token" content="{{ csrf }}">{% endif %}
<style>
*,*::before,*::after{box-sizing:border-box}html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{font-family:system-ui,sans-serif;font-size:1rem;margin:0 auto;max-width:52rem;padding:.75rem 1rem;
line-height:1.45;overflow-wrap:anywhere}
h1{font-size:1.4rem;line-height:1.25;margin:.5rem 0}h2{font-size:1.1rem;margin:1.1rem 0 .4rem}
nav{display:flex;gap:.25rem 1rem;align-items:center;flex-wrap:wrap}nav form{margin-left:auto}
nav a{display:inline-flex;align-items:center;min-height:44px}
.table{overflow-x:auto}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ccc;padding:.3rem;
text-align:left;vertical-align:top;font-size:.9rem;overflow-wrap:normal}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:.6rem;margin:0;max-height:45vh;
overflow-x:hidden;overflow-y:auto;font-size:.9rem}
label{display:block;margin:.9rem 0 .3rem;font-weight:600}
input,textarea,button{font:inherit;font-size:1rem}input[type=password]{width:100%;min-height:44px;padding:.5rem}
textarea{display:block;width:100%;min-height:7rem;padding:.5rem}
button{min-height:44px;min-width:44px;padding:.6rem 1rem;margin:.3rem 0;border-radius:.4rem}
.wide{width:100%}.actions{display:flex;gap:.6rem;flex-wrap:wrap}.actions form{flex:1 1 9rem;margin:0}
.actions button{width:100%}.actions>button{flex:1 1 9rem}.meta{color:#333;margin:.3rem 0}
.error{color:#a00}.status{font-weight:bold}
</style>
<script src="/static/app.js" defer></script>
</head><body>
{% if signed_in %}<nav><a href="/">Dashboard</a><a href="/events">Events</a>
<form method="post" action="/logout"><input type="hidden" name="csrf" value="{{ csrf }}">
<button type="submit" id="logout-button">Sign out</button></form></nav>{% endif %}
{% block content %}{% endblock %}
</body></html>
"""

LOGIN = """{% extends "base.html" %}{% block title %}Sign in - LidGuard notifications{% endblock %}
{% block content %}<h1>LidGuard notifications</h1>
{% if error %}<p class="error" id="login-error">{{ error }}</p>{% endif %}
<form method="post" action="/login">
<input type="hidden" name="csrf" value="{{ login_csrf }}">
<input type="hidden" name="returnUrl" value="{{ return_url }}">
<label for="access-token">Access token</label>
<input type="password" name="accessToken" id="access-token" autocomplete="current-password" required autofocus>
<button type="submit" id="login-button" class="wide">Sign in</button>
</form>{% endblock %}
"""

DASHBOARD = """{% extends "base.html" %}{% block content %}<h1>LidGuard notifications</h1>
<p><span id="active-subscriptions">{{ counts.ActiveSubscriptions }}</span> active subscription(s),
{{ counts.Events }} event(s) received, {{ counts.PendingEvents }} waiting to be sent,
{{ counts.PendingFollowUps }} follow-up(s) waiting for a reply.</p>
<h2>This browser</h2>
<div class="actions"><button type="button" id="subscribe-button">Subscribe this browser</button>
<button type="button" id="unsubscribe-button">Unsubscribe this browser</button></div>
<p id="push-status" role="status"></p>
<h2>Waiting for a reply</h2>
{% if follow_ups %}<ul>{% for item in follow_ups %}<li><a href="/follow-ups/{{ item.Id }}">{{ item.Provider }}
 {{ item.SessionIdentifier }}</a> until <time datetime="{{ item.ExpiresAtUtc }}">{{ item.ExpiresAtUtc }}</time></li>
{% endfor %}</ul>{% else %}<p>Nothing is waiting.</p>{% endif %}
<h2>Webhook URLs for <code>lidguard settings</code></h2>
<p>Post-stop, pre-suspend and session-end webhooks, and the closed-lid stop follow-up webhook:</p>
<pre id="webhook-url">{{ webhook_url }}</pre>
{% endblock %}
"""

EVENTS = """{% extends "base.html" %}{% block title %}Events - LidGuard notifications{% endblock %}
{% block content %}<h1>Latest events</h1>
<div class="table"><table id="events"><thead><tr><th>Received</th><th>Event</th><th>Reason</th><th>Session</th>
<th>Status</th><th>Deliveries (ok / permanent / transient)</th><th>Last error</th></tr></thead><tbody>
{% for event in events %}<tr><td><time datetime="{{ event.ReceivedAtUtc }}">{{ event.ReceivedAtUtc }}</time></td>
<td>{% if event.FollowUpId %}<a href="/follow-ups/{{ event.FollowUpId }}">{{ event.EventType }}</a>
{% else %}{{ event.EventType }}{% endif %}</td><td>{{ event.Reason or "" }}</td>
<td>{{ event.Provider or "" }}{% if event.ProviderName %}:{{ event.ProviderName }}{% endif %}
 {{ event.SessionIdentifier or "" }}</td><td>{{ event.Status }}</td>
<td>{{ event.Succeeded }} / {{ event.PermanentFailures }} / {{ event.TransientFailures }}</td>
<td>{{ event.LastError or "" }}</td></tr>{% else %}<tr><td colspan="7">No events yet.</td></tr>{% endfor %}
</tbody></table></div>{% endblock %}
"""

# Phone first (checked at 390x844 in tests/notify/test_notify_phone.py): the question, the status and
# deadline, the last assistant message, the reply box and thumb-sized buttons; the details below them.
FOLLOW_UP = """{% extends "base.html" %}{% block title %}Reply - LidGuard notifications{% endblock %}
{% block content %}<h1>{{ title }}</h1>
<div id="follow-up" data-id="{{ item.Id }}" data-status="{{ item.Status }}">
<p class="meta">Status: <span class="status" id="status">{{ item.Status }}</span>{% if item.Reply %} - reply
 sent{% endif %}. Deadline: <time id="deadline" datetime="{{ item.ExpiresAtUtc }}">{{ item.ExpiresAtUtc }}</time>
 (<span id="countdown"></span>; at most <time datetime="{{ cap }}">{{ cap }}</time>)</p></div>
{% if message %}<p class="error" id="action-message">{{ message }}</p>{% endif %}
<h2>Last assistant message</h2><pre id="last-message">{{ item.LastAssistantMessage or "" }}</pre>
{% if item.Status == "Pending" %}
<form method="post" action="/follow-ups/{{ item.Id }}/reply">
<input type="hidden" name="csrf" value="{{ csrf }}">
<label for="reply-text">Reply to continue</label>
<textarea name="text" id="reply-text" maxlength="{{ max_reply }}" required></textarea>
<button type="submit" id="reply-button" class="wide">Send reply</button></form>
<div class="actions">
<form method="post" action="/follow-ups/{{ item.Id }}/extend">
<input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="seconds" value="60">
<button type="submit" id="extend-button">Extend (+1 min)</button></form>
<form method="post" action="/follow-ups/{{ item.Id }}/cancel">
<input type="hidden" name="csrf" value="{{ csrf }}">
<button type="submit" id="sleep-button">Sleep now</button></form></div>
{% elif item.Reply %}<h2>Your reply</h2><pre id="reply">{{ item.Reply }}</pre>{% endif %}
<h2>Your prompt</h2><pre id="prompt-preview">{{ item.InputPromptPreview or "" }}</pre>
<p class="meta">Session <code id="session-identifier">{{ item.SessionIdentifier }}</code>{% if item.WorkingDirectory %}
 in <code id="working-directory">{{ item.WorkingDirectory }}</code>{% endif %}.</p>
{% endblock %}
"""

TEMPLATES = {"base.html": BASE, "login.html": LOGIN, "dashboard.html": DASHBOARD, "events.html": EVENTS,
             "follow_up.html": FOLLOW_UP}


def environment() -> Any:
    import jinja2

    return jinja2.Environment(loader=jinja2.DictLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined)
