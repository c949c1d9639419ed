// The server's HTTP calls (docs/protocol.md): rooms, seats, host actions. The WebSocket of a seat (or a
// spectator) is connection.js.

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
  kick(code, token, seat, seatId) { return this.request('POST', `/api/rooms/${enc(code)}/kick`, { seat, seat_id: seatId }, token); }
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
