// The server protocol (contract.md "HTTP and WebSocket"): REST calls for rooms, one WebSocket per
// seat (or spectator) that pushes `lobby` and `state` messages and takes `act` messages.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code || `http_${status}`;
  }
}

export class Api {
  constructor(base) {
    this.base = base || '';
  }

  async request(method, path, body, token) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (token) headers.Authorization = `Bearer ${token}`;
    let res;
    try {
      res = await fetch(this.base + path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError(0, 'network', String(err && err.message || err));
    }
    let data = null;
    const text = await res.text();
    if (text) {
      try { data = JSON.parse(text); } catch { data = { error: text }; }
    }
    if (!res.ok) throw new ApiError(res.status, data && data.code, data && (data.error || data.message));
    return data;
  }

  createRoom(body) { return this.request('POST', '/api/rooms', body); }
  join(code, name) { return this.request('POST', `/api/rooms/${enc(code)}/join`, { name }); }
  room(code) { return this.request('GET', `/api/rooms/${enc(code)}`); }
  addBots(code, token, count, level) {
    const body = { count };
    if (level) body.level = level;
    return this.request('POST', `/api/rooms/${enc(code)}/bots`, body, token);
  }
  start(code, token) { return this.request('POST', `/api/rooms/${enc(code)}/start`, {}, token); }
  // Beyond the contract (docs/protocol.md): host actions and leaving.
  kick(code, token, seat) { return this.request('POST', `/api/rooms/${enc(code)}/kick`, { seat }, token); }
  patchRoom(code, token, body) { return this.request('PATCH', `/api/rooms/${enc(code)}`, body, token); }
  rematch(code, token) { return this.request('POST', `/api/rooms/${enc(code)}/rematch`, {}, token); }
  leave(code, token) { return this.request('POST', `/api/rooms/${enc(code)}/leave`, {}, token); }
  // A seat left mid-game is taken back with its own token while the game lasts.
  rejoin(code, token) { return this.request('POST', `/api/rooms/${enc(code)}/rejoin`, {}, token); }

  wsUrl(code, token) {
    const origin = this.base || location.origin;
    const url = new URL(`/ws/${enc(code)}`, origin);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    if (token) url.searchParams.set('token', token);
    return url.toString();
  }
}

function enc(code) { return encodeURIComponent(code); }

// A socket that reconnects by itself with exponential backoff (0.5 s doubling to 8 s) after any drop,
// until close() is called. Handlers: onMessage(msg), onStatus('connecting'|'open'|'retrying', attempt).
export class Connection {
  constructor(url, { onMessage, onStatus, onGiveUp, shouldRetry }) {
    this.url = url;
    this.onMessage = onMessage;
    this.onStatus = onStatus || (() => {});
    this.onGiveUp = onGiveUp || (() => {});
    this.shouldRetry = shouldRetry || (async () => true);
    this.attempt = 0;
    this.closed = false;
    this.ws = null;
    this.timer = null;
    this.open();
  }

  open() {
    if (this.closed) return;
    this.onStatus(this.attempt ? 'retrying' : 'connecting', this.attempt);
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener('open', () => {
      this.attempt = 0;
      this.onStatus('open', 0);
    });
    ws.addEventListener('message', (ev) => {
      // A closed connection delivers nothing more: a message already in flight (the server's notice
      // that this seat left, say) must not reach a page that has moved on.
      if (this.closed || this.ws !== ws) return;
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      this.onMessage(msg);
    });
    ws.addEventListener('close', () => {
      if (this.ws !== ws || this.closed) return;
      this.scheduleRetry();
    });
  }

  async scheduleRetry() {
    this.attempt += 1;
    this.onStatus('retrying', this.attempt);
    // Every few failures ask whether retrying still makes sense (the room may be gone).
    if (this.attempt % 3 === 0 && !(await this.shouldRetry())) {
      this.closed = true;
      this.onGiveUp();
      return;
    }
    const delay = Math.min(8000, 500 * 2 ** Math.min(this.attempt - 1, 4));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay + Math.random() * 250);
  }

  // Reconnect now (e.g. the page became visible again or the network came back).
  nudge() {
    if (this.closed) return;
    if (this.ws && (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)) return;
    clearTimeout(this.timer);
    this.open();
  }

  send(obj) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(obj));
      return true;
    }
    return false;
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close();
  }
}
