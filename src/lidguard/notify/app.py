"""The Starlette application: webhooks in, Web Push out, follow-up poll/reply/extend/cancel, pages."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any, TypeVar
from urllib.parse import quote

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from lidguard.l10n import N_, negotiate
from lidguard.notify.auth import Auth, LoginThrottle, safe_return_url, token_matches
from lidguard.notify.bodies import (
    MAX_REPLY_CHARS,
    BadRequest,
    check_reply,
    check_seconds,
    check_subscription,
    follow_up_key,
    read_form,
    read_json,
)
from lidguard.notify.config import NotifyConfig
from lidguard.notify.dispatcher import Dispatcher
from lidguard.notify.events import WebhookError, provider_title, validate_webhook
from lidguard.notify.pages import environment, page_language
from lidguard.notify.readiness_line import local_readiness
from lidguard.notify.static import APP_JS, SERVICE_WORKER_JS
from lidguard.notify.store import EXTEND_CAP_SECONDS, Store, iso, parse_iso
from lidguard.notify.style import APP_CSS, THEME_JS

__all__ = ["MAX_REPLY_CHARS", "create_app"]

EXTEND_CAP = timedelta(seconds=EXTEND_CAP_SECONDS)
ACTIONS = ("reply", "extend", "cancel")
LOG = logging.getLogger("lidguard.notify")
# One line per webhook received: its event type and what became of it; never the secret in its URL or a
# text of its body (``serve`` prints these on stderr: cli.py).
WEBHOOK_LOG = logging.getLogger("lidguard.notify.webhooks")
T = TypeVar("T")
DASHBOARD_EVENTS = 8  # the dashboard's "Recent" cards (the events page lists 100)
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; style-src 'self'; frame-ancestors 'none'",
}


def follow_up_state(row: dict[str, Any]) -> dict[str, Any]:
    state: dict[str, Any] = {"status": row["Status"], "expiresAtUtc": row["ExpiresAtUtc"]}
    if row["Status"] == "Replied":
        state["reply"] = row["Reply"] or ""
    return state


def has_bearer(request: Request) -> bool:
    return request.headers.get("authorization", "")[:7].lower() == "bearer "


def client_address(request: Request) -> str | None:
    return request.client.host if request.client is not None else None


def create_app(config: NotifyConfig, *, stale_seconds: float = 300, idle_poll_seconds: float = 5.0,
               login_throttle: LoginThrottle | None = None) -> Starlette:
    auth = Auth(config)
    throttle = login_throttle if login_throttle is not None else LoginThrottle()
    templates = environment()
    holder: dict[str, Any] = {}

    async def db(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await anyio.to_thread.run_sync(functools.partial(call, *args, **kwargs))

    def store() -> Store:
        return holder["store"]  # type: ignore[no-any-return]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        holder["store"] = await anyio.to_thread.run_sync(Store, config.database_path)
        dispatcher = holder["dispatcher"] = Dispatcher(holder["store"], config, stale_seconds=stale_seconds,
                                                       idle_poll_seconds=idle_poll_seconds)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(dispatcher.run)
                yield
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(holder["store"].close)

    def page(name: str, request: Request, nonce: str | None, status: int = 200, **values: Any) -> HTMLResponse:
        """A page in the browser's language (``Accept-Language``; issue 38.2)."""
        culture, translate, words = page_language(request.headers.get("accept-language"))
        html = templates.get_template(name).render(signed_in=nonce is not None, _=translate, lang=culture,
                                                   words=words, csrf=auth.csrf_token(nonce) if nonce else "",
                                                   **values)
        response = HTMLResponse(html, status_code=status)
        if nonce is not None:
            auth.set_session(response, nonce)  # sliding expiry; the nonce (and so the CSRF token) stays
        return response

    def to_login(request: Request) -> RedirectResponse:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?returnUrl={quote(target, safe='/')}", status_code=303)

    def api_error(error: BadRequest) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=error.status)

    def unauthorized() -> JSONResponse:
        return JSONResponse({"error": "Sign in or send Authorization: Bearer <AccessToken>."}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})

    def too_many_text(wait: int) -> str:
        return f"Too many failed sign-ins from this address; try again in {wait} s."

    def api_refusal(request: Request) -> Response | None:
        """None when the API call may go on; a wrong Bearer token counts as a failed sign-in."""
        bearer, address = has_bearer(request), client_address(request)
        wait = throttle.retry_after(address) if bearer else 0
        if wait:
            return JSONResponse({"error": too_many_text(wait)}, status_code=429, headers={"Retry-After": str(wait)})
        if not auth.api_allowed(request.method, request.headers, request.cookies):
            if bearer:
                throttle.failed(address)
            return unauthorized()
        if bearer:
            throttle.succeeded(address)
        return None

    # Anonymous -------------------------------------------------------------------------------------
    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def public_key(request: Request) -> Response:
        return JSONResponse({"publicKey": config.vapid_public_key})

    async def webhook(request: Request) -> Response:
        if not token_matches(request.path_params["secret"], config.webhook_secret):
            WEBHOOK_LOG.info("webhook refused (404): not this server's webhook secret")
            return PlainTextResponse("Not found.", status_code=404)
        try:
            body = validate_webhook(await read_json(request))
        except BadRequest as error:
            WEBHOOK_LOG.info("webhook refused (%d): the body could not be read", error.status)
            return api_error(error)
        except WebhookError as error:
            WEBHOOK_LOG.info("webhook refused (400): %s",  # fixed texts naming at most a field, escaped
                             str(error).encode("ascii", "backslashreplace").decode().replace("\n", "\\n")[:200])
            return JSONResponse({"error": str(error)}, status_code=400)
        event_id, follow_up = await db(store().insert_event, body)
        holder["dispatcher"].signal()
        kind = f"{body['eventType']} ({body['reason']})" if body.get("reason") else str(body["eventType"])
        if follow_up is None:
            WEBHOOK_LOG.info("webhook %s accepted as event %d", kind, event_id)
            return JSONResponse({"accepted": True, "eventId": event_id}, status_code=202)
        WEBHOOK_LOG.info("webhook %s accepted as event %d; follow-up open until %s", kind, event_id,
                         follow_up["ExpiresAtUtc"])
        poll_url = f"{config.public_base_url}/api/follow-ups/{follow_up['Id']}/{follow_up['PollToken']}"
        return JSONResponse({"pollUrl": poll_url, "expiresAtUtc": follow_up["ExpiresAtUtc"]}, status_code=202)

    async def poll(request: Request) -> Response:
        row = await db(store().follow_up, follow_up_key(request.path_params["follow_up_id"]))
        if row is None or not token_matches(request.path_params["token"], row["PollToken"]):
            return JSONResponse({"error": "Not found."}, status_code=404)
        return JSONResponse(follow_up_state(row), headers={"Cache-Control": "no-store"})

    async def service_worker(request: Request) -> Response:
        return Response(SERVICE_WORKER_JS, media_type="text/javascript",
                        headers={"Service-Worker-Allowed": "/", "Cache-Control": "no-cache"})

    async def app_js(request: Request) -> Response:
        return Response(APP_JS, media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    async def theme_js(request: Request) -> Response:
        return Response(THEME_JS, media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    async def app_css(request: Request) -> Response:
        return Response(APP_CSS, media_type="text/css", headers={"Cache-Control": "no-cache"})

    # JSON API (Bearer or cookie + CSRF header) -----------------------------------------------------
    async def subscriptions(request: Request) -> Response:
        if (refused := api_refusal(request)) is not None:
            return refused
        try:
            body = await read_json(request)
            if not isinstance(body, dict):
                raise BadRequest(400, "The body must be a JSON object.")
            if request.method == "DELETE":
                endpoint = body.get("endpoint")
                if not isinstance(endpoint, str) or not endpoint or len(endpoint) > 2048:
                    raise BadRequest(400, "endpoint is required.")
                await db(store().deactivate_subscription, endpoint)
                return Response(status_code=204)
            # The pushes speak the subscribing browser's language (no header - an API client - the server's).
            accept = request.headers.get("accept-language")
            culture = negotiate(accept) if accept else None
            await db(store().upsert_subscription, *check_subscription(body), culture)
        except BadRequest as error:
            return api_error(error)
        return Response(status_code=204)

    async def act(follow_up_id: str, action: str, values: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if action not in ACTIONS:
            raise BadRequest(404, "Not found.")
        text = check_reply(values.get("text")) if action == "reply" else ""
        seconds = check_seconds(values.get("seconds", 60)) if action == "extend" else 0
        outcome, row = await db(store().answer_follow_up, follow_up_key(follow_up_id), action, text=text,
                                seconds=seconds)
        if outcome == "missing" or row is None:
            raise BadRequest(404, "Not found.")
        if outcome == "final":
            return 409, {"error": f"The follow-up is already {row['Status']}.", **follow_up_state(row)}
        return 200, follow_up_state(row)

    async def api_follow_up(request: Request) -> Response:
        if (refused := api_refusal(request)) is not None:
            return refused
        follow_up_id = follow_up_key(request.path_params["follow_up_id"])
        try:
            if request.method == "GET":
                row = await db(store().follow_up, follow_up_id)
                if row is None:
                    raise BadRequest(404, "Not found.")
                cap = iso(parse_iso(row["InitialExpiresAtUtc"]) + EXTEND_CAP)
                return JSONResponse({**follow_up_state(row), "followUpId": row["Id"],
                                     "initialExpiresAtUtc": row["InitialExpiresAtUtc"], "maxExpiresAtUtc": cap})
            action = request.path_params["action"]
            body = await read_json(request) if action != "cancel" else {}
            if not isinstance(body, dict):
                raise BadRequest(400, "The body must be a JSON object.")
            status, state = await act(follow_up_id, action, body)
        except BadRequest as error:
            return api_error(error)
        return JSONResponse(state, status_code=status)

    # Pages -----------------------------------------------------------------------------------------
    async def login(request: Request) -> Response:
        return_url = safe_return_url(request.query_params.get("returnUrl"))
        error, status, wait = "", 200, 0
        if request.method == "POST":
            try:
                form = await read_form(request)
            except BadRequest as problem:
                return PlainTextResponse(str(problem), status_code=problem.status)
            return_url = safe_return_url(form.get("returnUrl"))
            address = client_address(request)
            translate = page_language(request.headers.get("accept-language"))[1]
            if wait := throttle.retry_after(address):
                error, status = translate(N_("Too many failed sign-ins from this address; try again in {seconds} s."
                                             )).format(seconds=wait), 429
            elif not auth.login_form_ok(request.cookies, form.get("csrf")):
                error, status = translate(N_("The sign-in form expired; please try again.")), 400
            elif not auth.access_token_ok(form.get("accessToken")):
                throttle.failed(address)
                error, status = translate(N_("The access token is not correct.")), 401
            else:
                throttle.succeeded(address)
                signed_in = RedirectResponse(return_url, status_code=303)
                auth.set_session(signed_in)
                return signed_in
        login_nonce = auth.login_nonce(request.cookies)
        response = page("login.html", request, None, status, error=error, return_url=return_url,
                        login_csrf=auth.login_token(login_nonce))
        auth.set_login_cookie(response, login_nonce)
        if wait:
            response.headers["Retry-After"] = str(wait)
        return response

    async def logout(request: Request) -> Response:
        """Only the signed-in page's form (session cookie + its CSRF token) signs out."""
        nonce = auth.session(request.cookies)
        try:
            form = await read_form(request)
        except BadRequest as problem:
            return PlainTextResponse(str(problem), status_code=problem.status)
        if nonce is None:
            return PlainTextResponse("Not signed in (or the session expired): nothing to sign out.", status_code=400)
        if not auth.csrf_ok(nonce, form.get("csrf")):
            return PlainTextResponse("The form expired; go back and try again.", status_code=400)
        response = RedirectResponse("/login", status_code=303)
        auth.clear_session(response)
        return response

    async def dashboard(request: Request) -> Response:
        nonce = auth.session(request.cookies)
        if nonce is None:
            return to_login(request)
        counts = await db(store().counts)
        follow_ups = await db(store().pending_follow_ups)
        events = await db(store().latest_events, DASHBOARD_EVENTS)
        translate = page_language(request.headers.get("accept-language"))[1]
        ready = await anyio.to_thread.run_sync(local_readiness, translate)
        return page("dashboard.html", request, nonce, counts=counts, follow_ups=follow_ups, events=events,
                    webhook_url=config.webhook_url(), ready=ready)

    async def events_page(request: Request) -> Response:
        nonce = auth.session(request.cookies)
        if nonce is None:
            return to_login(request)
        return page("events.html", request, nonce, events=await db(store().latest_events, 100))

    async def follow_up_page(request: Request) -> Response:
        nonce = auth.session(request.cookies)
        if nonce is None:
            return to_login(request)
        follow_up_id = follow_up_key(request.path_params["follow_up_id"])
        translate = page_language(request.headers.get("accept-language"))[1]
        message, status = "", 200
        if request.method == "POST":
            try:
                form = await read_form(request)
                if not auth.csrf_ok(nonce, form.get("csrf")):
                    raise BadRequest(400, translate(N_("The form expired; reload the page and try again.")))
                code, state = await act(follow_up_id, request.path_params["action"], form)
                if code == 200:
                    back = "/" if form.get("back") == "dashboard" else f"/follow-ups/{follow_up_id}"
                    return RedirectResponse(back, status_code=303)
                message, status = translate(N_("The follow-up is already {status}.")).format(
                    status=state.get("status", "")), code
            except BadRequest as error:
                if error.status == 404:
                    return PlainTextResponse("Not found.", status_code=404)
                message, status = str(error), error.status
        row = await db(store().follow_up, follow_up_id)
        if row is None:
            return PlainTextResponse("Not found.", status_code=404)
        cap = iso(parse_iso(row["InitialExpiresAtUtc"]) + EXTEND_CAP)
        title = translate(N_("{agent} finished - reply to continue")).format(
            agent=provider_title(row["Provider"], row["ProviderName"]))
        return page("follow_up.html", request, nonce, status, item=row, cap=cap, title=title, message=message,
                    max_reply=MAX_REPLY_CHARS)

    routes = [
        Route("/healthz", healthz), Route("/api/push/public-key", public_key),
        Route("/api/push/subscriptions", subscriptions, methods=["POST", "DELETE"]),
        Route("/api/webhooks/lidguard/{secret}", webhook, methods=["POST"]),
        Route("/api/follow-ups/{follow_up_id}", api_follow_up, methods=["GET"]),
        Route("/api/follow-ups/{follow_up_id}/{action:str}", api_follow_up, methods=["POST"]),
        Route("/api/follow-ups/{follow_up_id}/{token}", poll, methods=["GET"]),
        Route("/login", login, methods=["GET", "POST"]), Route("/logout", logout, methods=["POST"]),
        Route("/", dashboard), Route("/events", events_page),
        Route("/follow-ups/{follow_up_id}", follow_up_page, methods=["GET"]),
        Route("/follow-ups/{follow_up_id}/{action}", follow_up_page, methods=["POST"]),
        Route("/service-worker.js", service_worker), Route("/static/app.js", app_js),
        Route("/static/theme.js", theme_js), Route("/static/app.css", app_css),
    ]
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(SecurityHeaders)])


class SecurityHeaders:
    """Adds ``SECURITY_HEADERS`` to every HTTP response (pure ASGI: no buffering)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(key.lower().encode(), value.encode()) for key, value in SECURITY_HEADERS.items()
                         if key.lower().encode() not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)

