// The coach of a practice game (Learn to play, docs/web.md "The coach"): from each state (the view,
// its log and the seat's legal actions) it finds the lessons that have arisen so far, in the rules'
// order, and shows the first one the player has not read yet, in the rulebook's words (i18n coach.*).
// A lesson is read with "Got it"; the coach can be skipped and resumed. What was read and whether it
// is skipped are kept in this browser (localStorage), so a reload or a second practice goes on from
// there. Only a practice room (room.settings.practice) has a coach.
import { h } from './dom.js';
import { t } from './i18n.js';

const SEEN_KEY = 'conflictology:coach:seen';
const SKIP_KEY = 'conflictology:coach:skipped';

const has = (legal, type) => legal.some((a) => a.type === type);
const logged = (log, test) => log.some(test);
const actionOf = (log, ...names) => logged(log, (e) => e.type === 'action' && names.includes(e.action));

// Sort Evidence has begun (the log's entry), or one's own row is being laid (views.py, sorting.py).
const sorting = ({ legal, log }) => has(legal, 'place') || logged(log, (e) => e.type === 'sort_evidence');
// Rounds 1–5 fall back on closeness only on a tie; round 6, the Final Challenge, always does.
const tied = (e) => e.type === 'random_placement'
  || (e.type === 'round_winner' && e.by === 'closeness' && e.round < 6);

// Each lesson arises from what the table shows the player: a decision offered to them, or an entry
// of the public log (a lesson about what someone else did is as useful as about one's own move).
export const LESSONS = Object.freeze({
  capitol: [
    ['income', ({ legal }) => has(legal, 'income')],
    ['claim', ({ legal }) => has(legal, 'income')],
    ['challenge', ({ legal, log }) => has(legal, 'challenge') || logged(log, (e) => e.type === 'challenge')],
    ['block', ({ legal, log }) => has(legal, 'block') || logged(log, (e) => e.type === 'block')],
    ['lose', ({ legal, log }) => has(legal, 'lose') || logged(log, (e) => e.type === 'lose')],
    ['hacker', ({ log }) => actionOf(log, 'hacker')],
    ['police', ({ log }) => actionOf(log, 'police_investigate', 'police_swap')],
    ['reporter', ({ log }) => actionOf(log, 'reporter')],
    ['scandal', ({ legal, log }) => has(legal, 'scandal') || actionOf(log, 'scandal')],
  ],
  conspiranoicos: [
    ['challengeCard', ({ log }) => logged(log, (e) => e.type === 'challenge')],
    // The lesson tells both sides: the winner's send and the loser's keep.
    ['send', ({ legal }) => has(legal, 'send') || has(legal, 'keep')],
    ['tie', ({ log }) => logged(log, tied)],
    ['final', ({ log }) => logged(log, (e) => e.type === 'final_round')],
    ['specials', ({ legal, log }) => has(legal, 'abduct') || has(legal, 'reveal_gnome')
      || logged(log, (e) => ['pass', 'abduct', 'reveal_gnome'].includes(e.type))],
    // Building the row, then each of the six scoring criteria (docs/rules/conspiranoicos.md,
    // Scoring), told while one's own row is being arranged, beside its preview of each criterion.
    ['row', sorting],
    ...['scoreFinal', 'scoreSequence', 'scoreRun', 'scoreTriple', 'scorePairs', 'scoreMajority']
      .map((id) => [id, ({ legal }) => has(legal, 'place')]),
  ],
});

function load(key, fallback) {
  try { return JSON.parse(localStorage.getItem(key) || 'null') ?? fallback; } catch { return fallback; }
}
function save(key, value) {
  try { localStorage.setItem(key, JSON.stringify(value)); } catch { /* private mode: this page only */ }
}

// Per game: the lessons read ({capitol: ['income', …]}).
function seen() { return load(SEEN_KEY, {}); }

export function isPractice(room) {
  return !!(room && room.settings && room.settings.practice);
}

// The lessons arisen in this state, in the rules' order.
export function arisen(game, view, legal) {
  const log = (view && view.log) || [];
  return (LESSONS[game] || []).filter(([, when]) => when({ view, legal: legal || [], log })).map(([id]) => id);
}

// What arose in this page's game so far: a decision answered before its lesson was read (a bot
// is quick, so is a player who knows) leaves the lesson due all the same.
const due = new Map();

// The lesson to show now: the first arisen one not read yet (null: none, or the coach is skipped).
export function current(game, view, legal, code = '') {
  const key = `${code}|${game}`;
  const now = new Set([...(due.get(key) || []), ...arisen(game, view, legal)]);
  due.set(key, now);
  if (load(SKIP_KEY, false)) return null;
  const read = seen()[game] || [];
  return (LESSONS[game] || []).map(([id]) => id).find((id) => now.has(id) && !read.includes(id)) || null;
}

function markRead(game, id) {
  const all = seen();
  all[game] = [...new Set([...(all[game] || []), id])];
  save(SEEN_KEY, all);
}

// Whether every lesson of the game has been read (the end of a practice game says so).
export function finished(game) {
  const read = seen()[game] || [];
  return (LESSONS[game] || []).every(([id]) => read.includes(id));
}

// One node for the table's lifetime: a live region is heard when its words change, not when the
// page draws it again (the table screen is rebuilt at every state).
let node = null;
let said = '';

// The coach's region on the table screen (js/screens/table.js), or null outside a practice room.
export function panel(app, c) {
  if (!isPractice(c.room) || app.state.spectator) return null;
  const game = c.view.game || c.room.game;
  if (!node) {
    node = h('section', { class: 'coach', role: 'region', 'aria-live': 'polite', 'data-testid': 'coach' });
  }
  node.setAttribute('aria-label', t('coach.label'));
  const skipped = load(SKIP_KEY, false);
  const lesson = current(game, c.view, c.legal, app.state.code);
  const key = `${game}|${skipped}|${lesson}|${t('coach.label')}`;
  if (key === said) return node;
  said = key;
  node.replaceChildren();
  node.dataset.lesson = lesson || '';
  const rerender = () => app.render();
  if (skipped) {
    node.classList.add('skipped');
    node.append(h('p', { class: 'coach-off' }, t('coach.off')),
      h('button', { type: 'button', class: 'secondary small', 'data-k': 'coach-resume',
        onclick: () => { save(SKIP_KEY, false); rerender(); } }, t('coach.resume')));
    return node;
  }
  node.classList.remove('skipped');
  const text = lesson ? t(`coach.${game}.${lesson}`) : t('coach.watching');
  node.append(
    h('h2', { class: 'coach-title' }, lesson ? t(`coach.${game}.titles.${lesson}`) : t('coach.label')),
    h('p', { class: 'coach-text' }, text),
    h('div', { class: 'row' },
      lesson ? h('button', { type: 'button', class: 'primary small', 'data-k': 'coach-ok',
        onclick: () => { markRead(game, lesson); rerender(); } }, t('coach.ok')) : null,
      h('button', { type: 'button', class: 'ghost small', 'data-k': 'coach-skip',
        onclick: () => { save(SKIP_KEY, true); rerender(); } }, t('coach.skip'))));
  return node;
}

// The end of a practice game: a real room of the same game, made at once (the lobby follows).
export function endOffer(app, game) {
  if (!isPractice(app.state.room)) return null;
  const name = app.savedName() || t('coach.you');
  return h('div', { class: 'coach-end', 'data-testid': 'coach-end' },
    h('p', null, finished(game) ? t('coach.done') : t('coach.again')),
    h('button', { type: 'button', class: 'primary', 'data-k': 'coach-real',
      onclick: () => app.createRoom(game, name, { options: {}, settings: {} }) }, t('coach.real')));
}
