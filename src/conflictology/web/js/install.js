// The installed app (docs/web.md, "On the phone"): the service worker that keeps the client for
// offline use, and the reload that takes the server's newer client, so that a page never plays an
// older client against a newer server.
import { IN_EXTENSION } from './config.js';
import { CLIENT_VERSION } from './version.js';

// Where a page last reloaded for a newer client, by the version it reloaded for (this tab only).
const RELOADED_KEY = 'conflictology:reloaded-for';

// Never in the extension (its pages are its own, updated by the browser's store), nor where the
// browser allows no worker (plain http on a LAN address is no secure context: the page works, uncached).
export function registerWorker() {
  if (IN_EXTENSION || !globalThis.isSecureContext || !('serviceWorker' in navigator)) return;
  if (location.protocol !== 'https:' && location.protocol !== 'http:') return;
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch(() => { /* the page works without it */ });
}

// True when this page is going away to load the server's client (`serverVersion`, from /api/info).
// Once per version and tab: behind a load balancer in the middle of a rollout two processes may
// answer with two versions, and a page must not reload for ever.
export function reloadIfStale(serverVersion) {
  if (!CLIENT_VERSION || !serverVersion) return false;
  let reloaded = null;
  try { reloaded = sessionStorage.getItem(RELOADED_KEY); } catch { /* storage blocked */ }
  if (serverVersion === CLIENT_VERSION) {
    if (reloaded) {
      try { sessionStorage.removeItem(RELOADED_KEY); } catch { /* storage blocked */ }
    }
    return false;
  }
  if (reloaded === serverVersion) return false;
  try { sessionStorage.setItem(RELOADED_KEY, serverVersion); } catch { return false; }
  location.reload();
  return true;
}
