// The end of a game tells its story (docs/web.md, "The recap"): cards read from the archived game
// (GET /api/games/{id}/recap: the server builds them once the game is over, from the record, never
// from anything hidden before), the winner's hand revealed first, then the game's own cards
// (js/capitol.js, js/conspiranoicos.js: recapCards, recapLines); shared as a picture drawn here
// (a PNG: the browser's share sheet where it takes files, else a download) or as text.
import { h } from './dom.js';
import { lang, t } from './i18n.js';
import { showToast } from './frame.js';
import { enabled as moving } from './motion.js';

// Per game id: 'loading', the recap, or 'none' (refused: a private game's stranger, or gone).
const recaps = new Map();
const MAX_KEPT = 8;
const revealed = new Set(); // the games whose recap has been drawn (it turns its cards once)

function tokenOf(state) {
  return state.token || (state.saved && state.saved.token) || null;
}

async function load(app, id) {
  recaps.set(id, 'loading');
  while (recaps.size > MAX_KEPT) recaps.delete(recaps.keys().next().value);
  const path = `/api/games/${encodeURIComponent(id)}/recap`;
  let found = 'none';
  // The archive may still be writing the last move when the end arrives: a few tries, a second apart.
  for (let attempt = 0; attempt < 4; attempt += 1) {
    try {
      found = await app.api.request('GET', path, undefined, tokenOf(app.state) || undefined);
      break;
    } catch (err) {
      if (err.status !== 409 && err.status !== 404 && err.status !== 503) break;
      await new Promise((done) => { setTimeout(done, 1000); });
    }
  }
  recaps.set(id, found);
  app.render();
}

// The recap's section on the end screen (null until it has loaded, and for whoever may not read it).
export function recapPanel(app, c, mod) {
  const id = app.state.room && app.state.room.game_id;
  if (!id || !mod.recapCards) return null;
  const r = recaps.get(id);
  if (r === undefined) load(app, id);
  if (!r || typeof r !== 'object') return null;
  const cards = mod.recapCards(c, r);
  const fresh = !revealed.has(id);
  revealed.add(id);
  return h('section', { class: ['recap', fresh && moving() && 'moving'], 'aria-label': t('recap.title'), 'data-testid': 'recap' },
    h('h3', null, t('recap.title')),
    h('div', { class: 'recap-grid' }, cards.map(([key, title, body], i) => h('article', {
      class: ['recap-card', `recap-${key}`], 'data-card': key, 'aria-labelledby': `recap-${key}-h` },
    h('h4', { id: `recap-${key}-h` }, title), body))),
    h('div', { class: 'row recap-share' },
      h('button', { type: 'button', class: 'secondary', 'data-k': 'share-picture', onclick: () => sharePicture(app, c, mod, r) }, t('recap.sharePicture')),
      h('button', { type: 'button', class: 'secondary', 'data-k': 'share-text', onclick: () => shareText(app, c, mod, r) }, t('recap.shareText'))));
}

function headline(c, r) {
  const names = r.winners.map((w) => c.name(w)).join(' & ');
  return t('recap.headline', { game: t(`games.${r.game}.name`), names });
}

// The replay's address, for a public room only: a private game's replay opens for its players alone.
function replayUrl(app, r) {
  const open = app.state.room && app.state.room.settings && app.state.room.settings.public;
  return open ? `${location.origin}${app.base || ''}/replay/${encodeURIComponent(r.id)}` : null;
}

export function recapText(app, c, mod, r) {
  const url = replayUrl(app, r);
  return [headline(c, r), ...mod.recapLines(c, r), ...(url ? [`${t('replay.open')}: ${url}`] : [])].join('\n');
}

async function shareText(app, c, mod, r) {
  const text = recapText(app, c, mod, r);
  if (navigator.share) {
    try { await navigator.share({ text }); return; } catch (err) { if (err && err.name === 'AbortError') return; }
  }
  try {
    await navigator.clipboard.writeText(text);
    showToast(t('recap.copied'));
  } catch {
    showToast(t('recap.copyFailed'), 'error');
  }
}

// The picture: 1200 × 630 (the size link previews use), the headline and the recap's lines.
export function drawPicture(app, c, mod, r) {
  const canvas = document.createElement('canvas');
  canvas.width = 1200; canvas.height = 630;
  const g = canvas.getContext('2d');
  const bg = g.createLinearGradient(0, 0, 0, 630);
  bg.addColorStop(0, '#1d2740'); bg.addColorStop(1, '#0f1422');
  g.fillStyle = bg; g.fillRect(0, 0, 1200, 630);
  g.fillStyle = '#f3c969'; g.font = '700 54px system-ui, sans-serif';
  g.fillText(fit(g, headline(c, r), 1100), 50, 100);
  g.fillStyle = '#e8ecf5'; g.font = '30px system-ui, sans-serif';
  let y = 170;
  for (const line of mod.recapLines(c, r)) {
    if (y > 560) break;
    g.fillText(fit(g, line, 1100), 50, y);
    y += 44;
  }
  g.fillStyle = '#9aa6c0'; g.font = '24px system-ui, sans-serif';
  g.fillText('Conflictology', 50, 600);
  return canvas;
}

function fit(g, text, width) {
  if (g.measureText(text).width <= width) return text;
  let s = text;
  while (s.length > 1 && g.measureText(`${s}…`).width > width) s = s.slice(0, -1);
  return `${s}…`;
}

async function sharePicture(app, c, mod, r) {
  const canvas = drawPicture(app, c, mod, r);
  const blob = await new Promise((done) => { canvas.toBlob(done, 'image/png'); });
  if (!blob) { showToast(t('recap.copyFailed'), 'error'); return; }
  const name = `conflictology-${r.game}-${String(r.id).slice(0, 12)}.png`;
  const file = new File([blob], name, { type: 'image/png' });
  if (navigator.canShare && navigator.canShare({ files: [file] })) {
    try {
      await navigator.share({ files: [file], text: headline(c, r) });
      return;
    } catch (err) { if (err && err.name === 'AbortError') return; }
  }
  const a = h('a', { href: URL.createObjectURL(blob), download: name, hidden: true, lang: lang() });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}
