// What the server offers (GET /api/info, docs/protocol.md): its games, their seat limits, rule
// options and bots, the room settings and their limits. The client keeps no copy of any of it: a
// form shows what the server says, labelled by the i18n files. An option or setting is offered in a
// form when the i18n files can name it (the rest keep the server's defaults: a first player, a deck
// file, a bot delay are for the command line and the API).
import { has } from './i18n.js';

let INFO = null;

export function setInfo(info) { INFO = info && Array.isArray(info.games) ? info : null; }
export function loaded() { return INFO !== null; }

function entry(game) {
  return (INFO && INFO.games.find((g) => g.name === game)) || null;
}

// The games this client can seat: the server's, those with a table module here (`tables`).
export function gameNames(tables) {
  return INFO ? INFO.games.map((g) => g.name).filter((name) => Object.hasOwn(tables, name)) : [];
}

// {min, max} players; null while the server has not said.
export function seatLimits(game) {
  const g = entry(game);
  return g ? { min: g.min_players, max: g.max_players } : null;
}

// The rule options of a host's form: [{key, kind: 'bool'|'set'|'count', default, choices?}], the
// switches first, then the sets of names (Capitol's roles that block the Mafia), then the numbers a
// game lists only when set (Capitol's copies of each role, its stalemate turns: `choices` with no
// default, null: left to the rules, which follow the table's size).
export function formOptions(game) {
  const g = entry(game);
  if (!g) return [];
  const out = [];
  const choices = g.choices || {};
  for (const [key, value] of Object.entries(g.options || {})) {
    if (!has(`options.${key}`)) continue;
    if (typeof value === 'boolean') out.push({ key, kind: 'bool', default: value });
    else if (Array.isArray(value) && Array.isArray(choices[key])) {
      out.push({ key, kind: 'set', default: value, choices: choices[key] });
    }
  }
  for (const [key, values] of Object.entries(choices)) {
    if (Object.hasOwn(g.options || {}, key) || !has(`options.${key}`)) continue;
    if (Array.isArray(values) && values.length && values.every(Number.isInteger)) {
      out.push({ key, kind: 'count', default: null, choices: values });
    }
  }
  return ['bool', 'set', 'count'].flatMap((kind) => out.filter((o) => o.kind === kind));
}

// The room settings of a host's form: [{key, kind: 'bool'|'seconds', default, min?, max?}]. The
// numbers of seconds come right after the switches that lead them (the timers switch stays above
// its clocks), then the other switches.
export function formSettings() {
  if (!INFO) return [];
  const limits = INFO.settings_limits || {};
  const out = [];
  for (const [key, value] of Object.entries(INFO.settings || {})) {
    if (!has(`settings.${key}`)) continue;
    if (typeof value === 'boolean') out.push({ key, kind: 'bool', default: value });
    else if (typeof value === 'number' && Array.isArray(limits[key])) {
      out.push({ key, kind: 'seconds', default: value, min: limits[key][0], max: limits[key][1] });
    }
  }
  const firstNumber = out.findIndex((s) => s.kind === 'seconds');
  if (firstNumber < 0) return out;
  const leading = out.slice(0, firstNumber);
  const rest = out.slice(firstNumber);
  return [...leading, ...rest.filter((s) => s.kind === 'seconds'), ...rest.filter((s) => s.kind !== 'seconds')];
}

// The lobby's bot menu: '' (the server's default level), the game's levels, then the other bots a
// player can be told about (a one-line description in the i18n files: random, Capitol's
// personalities, the mystery bot), in the server's order.
export function botChoices(game) {
  const g = entry(game);
  if (!g) return [''];
  const levels = (g.levels || []).filter((lv) => g.bots.includes(lv));
  const others = g.bots.filter((b) => !levels.includes(b) && has(`levels.about.${b}`));
  return ['', ...levels, ...others];
}

export function reactions() { return INFO ? INFO.reactions : null; }
export function publicUrl() { return INFO ? INFO.public_url : null; }
