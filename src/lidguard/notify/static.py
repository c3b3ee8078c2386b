"""The browser side: ``app.js`` (local times, live deadline, push subscription) and the service worker."""

from __future__ import annotations

__all__ = ["APP_JS", "SERVICE_WORKER_JS"]

APP_JS = r"""'use strict';
(function () {
  const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || '';
  // The page's language: <body data-words> holds these texts translated (notify/pages.py SCRIPT_WORDS).
  const words = (() => { try { return JSON.parse(document.body.dataset.words || '{}'); } catch (e) { return {}; } })();
  const t = (text, values) => (words[text] || text).replace(/\{(\w+)\}/g,
    (whole, name) => (values && name in values ? String(values[name]) : whole));
  function localize(root) {
    for (const node of (root || document).querySelectorAll('time[datetime]')) {
      const moment = new Date(node.getAttribute('datetime'));
      if (!isNaN(moment)) { node.textContent = moment.toLocaleString(); }
    }
  }
  function liveDeadline() {
    const box = document.getElementById('follow-up');
    const deadline = document.getElementById('deadline');
    const countdown = document.getElementById('countdown');
    if (!box || !deadline || !countdown) { return; }
    const tick = () => {
      const left = Math.round((new Date(deadline.getAttribute('datetime')) - Date.now()) / 1000);
      countdown.textContent = box.dataset.status !== 'Pending' ? box.dataset.status
        : left > 0 ? t('{seconds} s left', {seconds: left}) : t('deadline passed');
    };
    const refresh = async () => {
      try {
        const response = await fetch('/api/follow-ups/' + box.dataset.id, {credentials: 'same-origin'});
        if (!response.ok) { return; }
        const state = await response.json();
        deadline.setAttribute('datetime', state.expiresAtUtc);
        localize(box);
        if (state.status !== box.dataset.status) { window.location.reload(); }
      } catch (error) { /* offline: keep counting */ }
    };
    tick(); setInterval(tick, 1000); setInterval(refresh, 3000);
  }
  // The dashboard cards: a countdown each, times as "3 min ago", a "more" for clamped messages.
  function left(deadline) { return Math.round((new Date(deadline) - Date.now()) / 1000); }
  function spoken(seconds) {
    if (seconds <= 0) { return t('deadline passed'); }
    const m = Math.floor(seconds / 60), s = seconds % 60;
    return m ? t('{minutes} min {seconds} s left', {minutes: m, seconds: String(s).padStart(2, '0')})
      : t('{seconds} s left', {seconds: s});
  }
  function ago(moment) {
    const seconds = Math.round((Date.now() - moment) / 1000);
    if (seconds < 45) { return t('just now'); }
    if (seconds < 3600) { return t('{minutes} min ago', {minutes: Math.round(seconds / 60)}); }
    if (seconds < 86400) { return t('{hours} h ago', {hours: Math.round(seconds / 3600)}); }
    return moment.toLocaleDateString();
  }
  function cards() {
    const countdowns = document.querySelectorAll('.countdown[data-deadline]');
    const relatives = document.querySelectorAll('time.relative[datetime]');
    const tick = () => {
      for (const node of countdowns) { node.textContent = spoken(left(node.dataset.deadline)); }
      for (const node of relatives) {
        const moment = new Date(node.getAttribute('datetime'));
        if (!isNaN(moment)) { node.textContent = ago(moment); node.title = moment.toLocaleString(); }
      }
    };
    if (countdowns.length || relatives.length) { tick(); setInterval(tick, 1000); }
    for (const button of document.querySelectorAll('button.more[data-target]')) {
      const target = document.getElementById(button.dataset.target);
      if (!target || target.scrollHeight <= target.clientHeight + 1) { continue; }
      button.hidden = false;
      button.addEventListener('click', () => {
        const open = target.classList.toggle('open');
        button.textContent = open ? t('less') : t('more');
      });
    }
  }
  function growing(area) {
    const fit = () => { area.style.height = 'auto'; area.style.height = area.scrollHeight + 2 + 'px'; };
    area.addEventListener('input', fit); fit();
  }
  function themeToggle() {
    const button = document.getElementById('theme-toggle');
    if (!button) { return; }
    const root = document.documentElement;
    const current = () => root.dataset.theme ||
      (window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
    const label = () => { button.textContent = current() === 'dark' ? t('Light') : t('Dark'); };
    button.hidden = false; label();
    button.addEventListener('click', () => {
      root.dataset.theme = current() === 'dark' ? 'light' : 'dark';
      try { localStorage.setItem('lidguard-theme', root.dataset.theme); } catch (error) { /* not kept */ }
      label();
    });
  }
  async function subscriptionLine(on, off) {
    // One line, one button: which one depends on whether this browser already gets notifications.
    if (!('serviceWorker' in navigator) || !('PushManager' in window)) { return; }
    try {
      const reg = await navigator.serviceWorker.getRegistration('/');
      const subscribed = reg && await reg.pushManager.getSubscription();
      on.hidden = Boolean(subscribed); off.hidden = !subscribed;
    } catch (error) { /* keep the default: the subscribe button */ }
  }
  function base64UrlToBytes(text) {
    const padded = (text + '='.repeat((4 - text.length % 4) % 4)).replace(/-/g, '+').replace(/_/g, '/');
    return Uint8Array.from(atob(padded), c => c.charCodeAt(0));
  }
  const withTimeout = (promise, ms, what) => Promise.race([promise, new Promise((_, reject) =>
    setTimeout(() => reject(new Error(t('{what} did not answer within {seconds} s',
                                        {what: t(what), seconds: ms / 1000}))), ms))]);
  async function registration() {
    const reg = await navigator.serviceWorker.register('/service-worker.js', {scope: '/'});
    await navigator.serviceWorker.ready;
    return reg;
  }
  async function subscribe(status) {
    if (!('serviceWorker' in navigator) || !('PushManager' in window)) {
      status.textContent = t('This browser cannot receive Web Push (it needs https or localhost).'); return;
    }
    try {
      status.textContent = t('Subscribing...');
      if ((await Notification.requestPermission()) !== 'granted') {
        status.textContent = t('Notifications are not allowed for this site.'); return;
      }
      const reg = await withTimeout(registration(), 10000, 'The service worker');
      const key = (await (await fetch('/api/push/public-key')).json()).publicKey;
      const subscription = await withTimeout(reg.pushManager.subscribe(
        {userVisibleOnly: true, applicationServerKey: base64UrlToBytes(key)}), 15000, 'The push service');
      const response = await fetch('/api/push/subscriptions', {method: 'POST', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf()},
        body: JSON.stringify(subscription.toJSON())});
      status.textContent = response.ok ? t('This browser is subscribed.')
        : t('The server refused: {status}', {status: response.status});
      if (response.ok) { subscriptionLine(document.getElementById('subscribe-button'),
                                          document.getElementById('unsubscribe-button')); }
    } catch (error) { status.textContent = t('Subscribing failed: {error}', {error: error.message}); }
  }
  async function unsubscribe(status) {
    try {
      const reg = await withTimeout(registration(), 10000, 'The service worker');
      const subscription = await reg.pushManager.getSubscription();
      if (!subscription) { status.textContent = t('This browser is not subscribed.'); return; }
      await fetch('/api/push/subscriptions', {method: 'DELETE', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf()},
        body: JSON.stringify({endpoint: subscription.endpoint})});
      await subscription.unsubscribe();
      status.textContent = t('This browser is unsubscribed.');
      subscriptionLine(document.getElementById('subscribe-button'), document.getElementById('unsubscribe-button'));
    } catch (error) { status.textContent = t('Unsubscribing failed: {error}', {error: error.message}); }
  }
  document.addEventListener('DOMContentLoaded', () => {
    localize(document);
    liveDeadline();
    cards();
    themeToggle();
    const area = document.getElementById('reply-text');
    if (area) { growing(area); }
    const status = document.getElementById('push-status');
    const on = document.getElementById('subscribe-button');
    const off = document.getElementById('unsubscribe-button');
    if (on && status) { on.addEventListener('click', () => subscribe(status)); }
    if (off && status) { off.addEventListener('click', () => unsubscribe(status)); }
    if ('serviceWorker' in navigator && status) { registration().catch(() => {}); }
    if (on && off) { subscriptionLine(on, off); }
  });
})();
"""

SERVICE_WORKER_JS = r"""'use strict';
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', event => event.waitUntil(self.clients.claim()));
self.addEventListener('push', event => {
  let data = {};
  try { data = event.data ? event.data.json() : {}; } catch (error) { data = {}; }
  const url = data.url || '/events';
  event.waitUntil(self.registration.showNotification(data.title || 'LidGuard notification', {
    body: data.body || 'LidGuard received a suspend event.', tag: data.tag || 'lidguard-suspend',
    data: {url: url}, requireInteraction: String(data.tag || '').startsWith('lidguard-stopfollowup-')}));
});
self.addEventListener('notificationclick', event => {
  event.notification.close();
  const target = new URL((event.notification.data && event.notification.data.url) || '/events', self.location.origin);
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({type: 'window', includeUncontrolled: true});
    for (const client of windows) {
      if (client.url === target.href && 'focus' in client) { return client.focus(); }
    }
    return self.clients.openWindow(target.href);
  })());
});
"""
