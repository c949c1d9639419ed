// Table talk beside the video call (docs/web.md "Beside the call"): reactions shown on the sender's
// seat for a few seconds, a player's once-per-game hold of every clock, the host's pause and resume,
// and the banner everyone sees while the clocks are stopped. The server checks everything
// (docs/protocol.md); this module only offers what the state message says is possible.
import { h } from './dom.js';
import { t } from './i18n.js';

// The server's set (GET /api/info "reactions"); this copy draws the buttons before it answers.
export let REACTIONS = ['👍', '👏', '😂', '😮', '🤔', '🤥', '😬', '🙏'];
export function setReactions(list) { if (Array.isArray(list) && list.length) REACTIONS = list.slice(0, 16); }

const SHOWN_MS = 4000;
let recent = []; // {seat, emoji, at}
let cleanup = null;

// A `reaction` message: shown on the sender's seat for a few seconds (the page need not re-render).
export function onReaction(msg) {
  if (typeof msg.seat !== 'number' || typeof msg.emoji !== 'string') return;
  recent.push({ seat: msg.seat, emoji: msg.emoji, at: Date.now() });
  recent = recent.slice(-12);
  decorate();
  clearTimeout(cleanup);
  cleanup = setTimeout(decorate, SHOWN_MS + 50);
}

// Puts the recent reactions on their seats: an opponent's panel (data-seat), else one's own area,
// else the table-talk bar.
export function decorate(root = document) {
  const now = Date.now();
  recent = recent.filter((r) => now - r.at < SHOWN_MS);
  for (const old of root.querySelectorAll('.reaction-bubble')) old.remove();
  const you = Number(document.body.dataset.you);
  for (const r of recent) {
    let seatEl = root.querySelector(`[data-seat="${r.seat}"]`);
    if (!seatEl && r.seat === you) seatEl = root.querySelector('.me-area, .consp-player.mine');
    const host = seatEl || root.querySelector('.talk-reactions-shown');
    if (!host) continue;
    host.classList.add('has-reaction');
    host.appendChild(h('span', { class: 'reaction-bubble', 'data-reaction': String(r.seat), role: 'img', 'aria-label': r.emoji }, r.emoji));
  }
}

// The bar under the banner. env: {msg, you, spectator, host, name(seat), send(obj), post(path),
// toast(text, kind), extras: [elements to add to the bar]}.
export function talkBar(env) {
  const msg = env.msg || {};
  const pause = msg.pause || null;
  const playing = !!(msg.view && !(Array.isArray(msg.view.winners) && msg.view.winners.length && !(msg.legal || []).length));
  const seated = !env.spectator && typeof env.you === 'number';
  const held = Array.isArray(msg.holds) && seated && msg.holds.includes(env.you);
  const parts = [];
  if (pause) parts.push(pauseBanner(env, pause));
  const buttons = [];
  if (seated) {
    buttons.push(h('div', { class: 'reactions', role: 'group', 'aria-label': t('talk.react') },
      REACTIONS.map((emoji, i) => h('button', { type: 'button', class: 'ghost reaction', 'data-k': `react-${i}`,
        'aria-label': t('talk.reactWith', { emoji }), title: t('talk.reactWith', { emoji }),
        onclick: () => env.send({ type: 'react', emoji }) }, emoji))));
  }
  if (seated && playing && !pause) {
    buttons.push(h('button', { type: 'button', class: 'secondary small', 'data-k': 'hold', disabled: held,
      title: held ? t('talk.holdUsed') : t('talk.holdHint'), onclick: () => env.send({ type: 'hold' }) },
    held ? t('talk.holdUsed') : t('talk.hold')));
  }
  if (env.host && playing) {
    buttons.push(pause && pause.kind === 'host'
      ? h('button', { type: 'button', class: 'primary small', 'data-k': 'resume', onclick: () => env.post('resume') }, t('talk.resume'))
      : h('button', { type: 'button', class: 'secondary small', 'data-k': 'pause', onclick: () => env.post('pause') },
        pause ? t('talk.pauseLonger') : t('talk.pause')));
  }
  buttons.push(...(env.extras || []).filter(Boolean));
  parts.push(h('div', { class: 'row talk-row' }, buttons, h('span', { class: 'talk-reactions-shown' })));
  return h('section', { class: 'talk', 'aria-label': t('talk.title'), 'data-testid': 'talk' }, parts);
}

function pauseBanner(env, pause) {
  const mine = pause.seat === env.you && !env.spectator;
  const name = env.name(pause.seat);
  const text = pause.kind === 'hold' ? t(mine ? 'talk.holdsYou' : 'talk.holds', { name })
    : t(mine ? 'talk.pausedYou' : 'talk.paused', { name });
  return h('div', { class: ['pause-banner', pause.kind], role: 'status', 'data-testid': 'pause' },
    h('span', { class: 'pause-icon', 'aria-hidden': 'true' }, pause.kind === 'hold' ? '✋' : '⏸'),
    h('span', { class: 'pause-text' }, text),
    pause.until ? h('span', { class: 'countdown theirs', 'data-deadline': String(pause.until), role: 'timer', 'aria-label': t('talk.holdLeft') },
      h('span', { class: 'countdown-bar' }, h('span', { class: 'countdown-fill' })),
      h('span', { class: 'countdown-num' }, '')) : null,
    pause.left !== null && pause.left !== undefined
      ? h('span', { class: 'muted small' }, t('talk.clockLeft', { n: Math.ceil(pause.left) })) : null);
}
