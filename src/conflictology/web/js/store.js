// The client's state and the reducer over the server's messages: reduce(state, message, now) -> state,
// pure (no DOM, no storage, no clock of its own), so a recorded conversation can be replayed in a test.
// What a message asks beyond the state (a toast, a reconnection) is app.js's, keyed by message type.

// The screens, in the order a visit goes through them. `body[data-screen]` and `main.screen-…` carry
// these names (the stylesheet reads them).
export const Screen = Object.freeze({
  HOME: 'home',             // create a room, or join one by its code
  JOIN: 'join',             // a join link opened with no seat yet (or a seat left mid-game, to take back)
  CONNECTING: 'connecting', // a seat or a spectator whose socket has not said where the room is
  LOBBY: 'lobby',           // seated before the game
  TABLE: 'table',           // the game, and its end (the end panel above the table)
  GONE: 'gone',             // the room does not exist, or the server cannot be reached
});

// A clock that ran out is said under the banner this long (issue 17.13).
export const NOTE_MS = 10000;

export function initialState() {
  return {
    screen: Screen.HOME,
    code: null,
    token: null,
    seat: null,
    spectator: false,
    // The seat this browser keeps for the room ({token, seat, name, left?}; localStorage's copy, which
    // app.js reads before each message and writes back when the reducer changed it).
    saved: null,
    room: null,            // the last room object (lobby message, GET, or state message)
    msg: null,             // the last `state` message
    seq: null,
    busy: false,           // an act sent and not answered yet
    ui: {},                // the table modules' selections, reset when the decision changes
    uiKey: '',
    connStatus: 'idle',    // idle | connecting | open | retrying | replaced
    connAttempt: 0,
    canRejoin: false,
    confirmLeave: false,
    goneReason: null,      // notFound | network
    homeGame: null,        // the game chosen on the home screen (the first offered, until one is picked)
    botLevel: '',
    rulesGame: null,
    // Clocks that ran out in this game: marks on the log entries they made, the note under the banner.
    timeouts: { game: null, marks: [], note: null, logLen: 0 },
  };
}

const REDUCERS = {
  lobby(state, msg) {
    const room = msg.room;
    let { screen, msg: last } = state;
    if (room.status === 'lobby') {
      screen = Screen.LOBBY;
      last = null;
    } else if (screen !== Screen.TABLE && !state.msg) {
      screen = Screen.CONNECTING;
    }
    return followSeat({ ...state, room, screen, msg: last }, msg.you);
  },

  state(state, msg, now) {
    const view = msg.view || {};
    let { seat, saved, ui, uiKey } = state;
    if (!state.spectator && typeof view.you === 'number' && view.you !== seat) {
      seat = view.you;
      if (saved) saved = { ...saved, seat };
    }
    const key = JSON.stringify(msg.legal || []);
    if (key !== uiKey) {
      uiKey = key;
      ui = {};
    }
    return {
      ...state, msg, seq: msg.seq, busy: false, screen: Screen.TABLE, room: msg.room || state.room,
      seat, saved, ui, uiKey, timeouts: noteTimeouts(state, msg, now),
    };
  },

  error(state) {
    return state.busy ? { ...state, busy: false } : state;
  },

  // This seat was opened in more tabs than the server keeps: this, the oldest, stops here.
  replaced(state) {
    return { ...state, connStatus: 'replaced' };
  },

  // Kicked by the host (or the seat was given up elsewhere): this browser no longer holds it, unless
  // it left the game itself (another tab did): then the token may still take it back.
  left(state) {
    return state.saved && state.saved.left ? state : { ...state, saved: null };
  },

  room(state, msg) {
    return msg.room ? followSeat({ ...state, room: msg.room }, msg.you) : state;
  },
};

// The state after `message` (a server message); a type the client does not know changes nothing.
export function reduce(state, message, now = 0) {
  const reducer = Object.hasOwn(REDUCERS, message.type) ? REDUCERS[message.type] : null;
  return reducer ? reducer(state, message, now) : state;
}

// Seats are renumbered when someone leaves the lobby. A lobby message says which seat is ours (`you`,
// docs/protocol.md); without it (a message that does not carry it, an older server) we follow our
// seat by the name we joined with. Once playing, the view's `you` settles it.
function followSeat(state, you) {
  const { room, saved } = state;
  if (!room || state.spectator || !saved) return state;
  const seats = room.seats || [];
  let seat = saved.seat;
  if (typeof you === 'number') {
    seat = you;
  } else {
    const at = seats.find((x) => x.seat === saved.seat);
    if (!at || at.bot || at.name !== saved.name) {
      const byName = seats.find((x) => !x.bot && x.name === saved.name);
      if (byName) seat = byName.seat;
    }
  }
  return { ...state, seat, saved: seat === saved.seat ? saved : { ...saved, seat } };
}

// A state message lists the game's timeouts (docs/protocol.md): the state each made and the seat. A
// timeout new since the last state is said under the banner, and the log entry it made is marked, so
// that "Ben takes Income." does not read as Ben's choice.
function noteTimeouts(state, msg, now) {
  const log = (msg.view && msg.view.log) || [];
  const gameId = msg.room && msg.room.game_id;
  let { marks, note, logLen } = state.timeouts;
  if (state.timeouts.game !== gameId) {
    marks = [];
    note = null;
  }
  const fresh = state.seq === null || state.seq === undefined ? []
    : (msg.timeouts || []).filter((x) => x.seq > state.seq && x.seq <= msg.seq);
  if (fresh.length) {
    const seats = [...new Set(fresh.map((x) => x.seat))];
    marks = [...marks, { from: logLen || 0, to: log.length, seats }];
    note = { seats, until: now + NOTE_MS };
  }
  return { game: gameId, marks, note, logLen: log.length };
}

// ---- log deltas (docs/protocol.md, "Log deltas") -----------------------------------------------

// A state message with its view's log whole. `held` is the log the socket holds after its previous
// message; `log_from` (v2) says where the message's log starts in it: the entries before are held
// ones, 0 means the message is whole. A message without `log_from` is whole already. Null for a gap
// (the message starts past what is held: entries were never received), which a `sync` mends.
export function joinLog(held, msg) {
  if (!msg || msg.type !== 'state' || !msg.view || typeof msg.log_from !== 'number') return msg;
  const from = msg.log_from;
  if (from > held.length) return null;
  const tail = msg.view.log || [];
  const log = from === 0 ? tail : held.slice(0, from).concat(tail);
  return { ...msg, view: { ...msg.view, log } };
}

// ---- what screens ask of the state --------------------------------------------------------------

export function isOver(view) {
  return view.over === true || (Array.isArray(view.winners) && view.winners.length > 0);
}

export function isHost(state) {
  if (!state.room || state.spectator) return false;
  const me = (state.room.seats || []).find((s) => s.seat === state.seat);
  return !!(me && me.host);
}

// A game being played, not over: leaving it asks first.
export function gameOn(state) {
  return !!(state.room && state.room.status === 'playing' && state.msg && !(state.msg.view && isOver(state.msg.view)));
}

// The seat whose view this is (null for a spectator).
export function viewer(state) {
  if (state.spectator) return null;
  const view = state.msg && state.msg.view;
  return view && view.you !== undefined ? view.you : state.seat;
}
