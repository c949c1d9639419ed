// The installed app's service worker (docs/web.md, "On the phone"). It keeps this version's client
// (every file of the web dir) so that the app opens without a network, and nothing else: the API,
// the sockets, replays, metrics and anything sent with a token always go to the server untouched.
// Online, the server answers first (a new version's files are taken at once); its cache is only
// what a page falls back on when the server cannot be reached.
// The server writes the next line when it serves this file (server/webclient.py): its client's
// version and files. Served any other way, the worker keeps nothing and answers nothing.
const CLIENT = { version: null, files: [] };

const PREFIX = 'conflictology-client-';
const CACHE = PREFIX + CLIENT.version;
const FILES = new Set(CLIENT.files);

// A file of this version: the copy the page has just loaded (the browser's HTTP cache) when a
// server of this version sent it (it says so in X-Client-Version), else the server's, asked again.
// So a first visit costs a few requests more than the page's own, not twice as many.
async function keep(cache, path) {
  let response = await fetch(path, { cache: 'force-cache' }).catch(() => null);
  if (!response || !response.ok || response.headers.get('X-Client-Version') !== CLIENT.version) {
    response = await fetch(path, { cache: 'reload' });
  }
  if (!response.ok || response.headers.get('X-Client-Version') !== CLIENT.version) {
    throw new Error(`${path}: not this version's (${response.status})`);
  }
  await cache.put(path, response);
}

// All of this version's files or none (a failed install is tried again at the next visit).
self.addEventListener('install', (event) => {
  if (!CLIENT.version) return;
  event.waitUntil(caches.open(CACHE)
    .then((cache) => Promise.all(CLIENT.files.map((path) => keep(cache, path))))
    .then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((n) => n.startsWith(PREFIX) && n !== CACHE).map((n) => caches.delete(n))))
    .then(() => self.clients.claim()));
});

// The page a navigation falls back on: the replay viewer's, or the client's one page (which reads
// the room from the address). Other paths (the API's, /metrics…) are not the worker's.
function pageOf(path) {
  if (path.startsWith('/replay/')) return '/replay.html';
  if (path === '/' || path === '/index.html' || /^\/r\/[^/]+\/?$/.test(path)) return '/index.html';
  return null;
}

async function serverFirst(request, fallback) {
  try {
    const response = await fetch(request, { cache: 'no-cache' });
    // A proxy's 502 while the server restarts: the kept page is better.
    if (response.status < 500) return response;
    const kept = await caches.match(fallback, { cacheName: CACHE });
    return kept || response;
  } catch (err) {
    const kept = await caches.match(fallback, { cacheName: CACHE });
    if (kept) return kept;
    throw err;
  }
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (!CLIENT.version || request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === 'navigate') {
    const page = pageOf(url.pathname);
    if (page) event.respondWith(serverFirst(request, page));
    return;
  }
  // A file of the client, asked for as it is (a query string would be something else).
  if (url.search || request.headers.has('Authorization') || !FILES.has(url.pathname)) return;
  event.respondWith(serverFirst(request, url.pathname));
});
