// One WebSocket per seat (or spectator), docs/protocol.md: it pushes `lobby` and `state` messages
// and takes `act`, `react`, `ping` and `sync`. It reconnects by itself after any drop.
//
// It asks for log deltas (`?v=2`): each state message carries only the log entries this socket has
// not had yet, and the connection joins them to the log it holds, so the rest of the client sees
// whole views. A new socket's first state is whole; a gap (entries never received) asks for a sync.

import { joinLog } from './store.js';

// The protocol version this client speaks (docs/protocol.md, "Log deltas").
export const PROTOCOL = '2';

// A socket that reconnects by itself with exponential backoff (0.5 s doubling to 8 s) after any drop,
// until close() is called. Handlers: onMessage(msg), onStatus('connecting'|'open'|'retrying', attempt).
export class Connection {
  constructor(url, { onMessage, onStatus, onGiveUp, shouldRetry }) {
    const withVersion = new URL(url);
    withVersion.searchParams.set('v', PROTOCOL);
    this.url = withVersion.toString();
    this.log = [];  // the game log this socket has been sent (each socket starts with none)
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
    this.log = [];
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
      if (msg && msg.type === 'state') {
        const joined = joinLog(this.log, msg);
        if (!joined) {
          // Entries this socket never got: ask for the whole state rather than show a wrong log.
          this.send({ type: 'sync' });
          return;
        }
        msg = joined;
        this.log = (msg.view && msg.view.log) || [];
      }
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

  // The browser says the network is gone: say so now (a dead socket may take a minute to time out,
  // while the banner still says online and moves go nowhere) and try again by the usual backoff; the
  // `online` event nudges it at once. A false alarm costs one reconnect, within half a second.
  drop() {
    if (this.closed || !this.ws) return;
    const ws = this.ws;
    if (ws.readyState !== WebSocket.OPEN && ws.readyState !== WebSocket.CONNECTING) return;
    this.ws = null;  // its close event, whenever it comes, is no longer this connection's
    ws.close();
    this.scheduleRetry();
  }

  // An action for the state numbered `seq`: the server refuses it as `stale` if the game moved on.
  act(action, seq) { return this.send({ type: 'act', action, seq }); }

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
