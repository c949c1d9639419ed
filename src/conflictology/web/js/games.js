// What the client knows about each game: seat limits and the rule options a host may set.
// Option names are the engines' (contract.md "Engine"); labels live in the i18n files.
export const GAMES = {
  capitol: {
    min: 2, max: 6,
    options: [
      { key: 'forced_scandal', kind: 'bool', default: true },
      { key: 'anyone_challenges_block', kind: 'bool', default: false },
      { key: 'steal_blockers', kind: 'set', choices: ['mafia', 'police', 'reporter'], default: [] },
    ],
    // Named personalities a host may seat (docs/bots.md "Capitol personalities").
    bots: ['heuristic-honest', 'heuristic-bluffer', 'heuristic-sceptic', 'heuristic-aggressive'],
  },
  conspiranoicos: {
    min: 2, max: 2,
    options: [],
  },
};

// Bot levels: the contract's bot names; omitting the level seats the server's default.
export const BOT_LEVELS = ['', 'easy', 'normal', 'hard', 'random'];

// Room settings the host may change (server/protocol.py RoomSettings).
export const SETTINGS = [
  { key: 'timers', kind: 'bool', default: true },
  { key: 'turn_seconds', kind: 'seconds', default: 60 },
  { key: 'response_seconds', kind: 'seconds', default: 12 },
  { key: 'choice_seconds', kind: 'seconds', default: 30 },
  // How long a player's hold stops the clocks (table talk, talk.js), 1–300 s.
  { key: 'hold_seconds', kind: 'seconds', default: 30, max: 300 },
  { key: 'spectators', kind: 'bool', default: true },
  { key: 'standing', kind: 'bool', default: false },
];
