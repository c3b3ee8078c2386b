"""The browser side: ``app.js`` (local times, live deadline, push subscription) and the service worker."""

from __future__ import annotations

__all__ = ["APP_JS", "SERVICE_WORKER_JS"]

APP_JS = r"""'use strict';
(function () {
  const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || '';
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
        : left > 0 ? left + ' s left' : 'deadline passed';
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
  function base64UrlToBytes(text) {
    const padded = (text + '='.repeat((4 - text.length % 4) % 4)).replace(/-/g, '+').replace(/_/g, '/');
    return Uint8Array.from(atob(padded), c => c.charCodeAt(0));
  }
  const withTimeout = (promise, ms, what) => Promise.race([promise, new Promise((_, reject) =>
    setTimeout(() => reject(new Error(what + ' did not answer within ' + ms / 1000 + ' s')), ms))]);
  async function registration() {
    const reg = await navigator.serviceWorker.register('/service-worker.js', {scope: '/'});
    await navigator.serviceWorker.ready;
    return reg;
  }
  async function subscribe(status) {
    if (!('serviceWorker' in navigator) || !('PushManager' in window)) {
      status.textContent = 'This browser cannot receive Web Push (it needs https or localhost).'; return;
    }
    try {
      status.textContent = 'Subscribing...';
      if ((await Notification.requestPermission()) !== 'granted') {
        status.textContent = 'Notifications are not allowed for this site.'; return;
      }
      const reg = await withTimeout(registration(), 10000, 'The service worker');
      const key = (await (await fetch('/api/push/public-key')).json()).publicKey;
      const subscription = await withTimeout(reg.pushManager.subscribe(
        {userVisibleOnly: true, applicationServerKey: base64UrlToBytes(key)}), 15000, 'The push service');
      const response = await fetch('/api/push/subscriptions', {method: 'POST', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf()},
        body: JSON.stringify(subscription.toJSON())});
      status.textContent = response.ok ? 'This browser is subscribed.' : 'The server refused: ' + response.status;
    } catch (error) { status.textContent = 'Subscribing failed: ' + error.message; }
  }
  async function unsubscribe(status) {
    try {
      const reg = await withTimeout(registration(), 10000, 'The service worker');
      const subscription = await reg.pushManager.getSubscription();
      if (!subscription) { status.textContent = 'This browser is not subscribed.'; return; }
      await fetch('/api/push/subscriptions', {method: 'DELETE', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf()},
        body: JSON.stringify({endpoint: subscription.endpoint})});
      await subscription.unsubscribe();
      status.textContent = 'This browser is unsubscribed.';
    } catch (error) { status.textContent = 'Unsubscribing failed: ' + error.message; }
  }
  document.addEventListener('DOMContentLoaded', () => {
    localize(document);
    liveDeadline();
    const status = document.getElementById('push-status');
    const on = document.getElementById('subscribe-button');
    const off = document.getElementById('unsubscribe-button');
    if (on && status) { on.addEventListener('click', () => subscribe(status)); }
    if (off && status) { off.addEventListener('click', () => unsubscribe(status)); }
    if ('serviceWorker' in navigator && status) { registration().catch(() => {}); }
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
