// Card art, drawn as SVG from data: the six Capitol roles and the Conspiranoicos evidence cards.
// Everything interpolated here is escaped; the markup is built from the client's own data.
import { escapeXml as x, svg } from './dom.js';
import { langTag } from './i18n.js';

export const ROLE_COLORS = {
  banker: ['#1f7a4d', '#0f4a2d'],
  mafia: ['#8c2332', '#4a0f18'],
  hacker: ['#5b3fa0', '#2c1d55'],
  judge: ['#2b4a7a', '#15263f'],
  reporter: ['#c06a1f', '#6b3508'],
  police: ['#1f6fb2', '#0c3a63'],
};

const ROLE_ICONS = {
  // A stack of coins under a dollar sign.
  banker: `<ellipse cx="60" cy="92" rx="26" ry="7" fill="#f4d35e"/><rect x="34" y="80" width="52" height="12" fill="#e0b93f"/>
    <ellipse cx="60" cy="80" rx="26" ry="7" fill="#f4d35e"/><rect x="34" y="68" width="52" height="12" fill="#e0b93f"/>
    <ellipse cx="60" cy="68" rx="26" ry="7" fill="#f7e08a"/>
    <circle cx="60" cy="44" r="17" fill="#f7e08a" stroke="#b38f1f" stroke-width="3"/>
    <text x="60" y="52" text-anchor="middle" font-size="24" font-weight="700" fill="#7a5c00" font-family="Georgia,serif">$</text>`,
  // A fedora.
  mafia: `<ellipse cx="60" cy="82" rx="40" ry="9" fill="#1c1c1c"/>
    <path d="M36 80 C36 52 44 42 52 46 C56 48 64 48 68 46 C76 42 84 52 84 80 Z" fill="#2b2b2b"/>
    <path d="M37 72 H83 V80 H37 Z" fill="#c8c8c8"/>`,
  // A terminal window with a prompt.
  hacker: `<rect x="28" y="40" width="64" height="48" rx="6" fill="#101820" stroke="#7ee787" stroke-width="2.5"/>
    <rect x="28" y="40" width="64" height="9" rx="3" fill="#7ee787"/>
    <path d="M38 60 L48 67 L38 74" stroke="#7ee787" stroke-width="3.5" fill="none" stroke-linecap="round"/>
    <path d="M53 75 H68" stroke="#7ee787" stroke-width="3.5" stroke-linecap="round"/>`,
  // A gavel over its block.
  judge: `<g transform="rotate(-35 60 60)"><rect x="40" y="36" width="40" height="18" rx="4" fill="#d9b38c" stroke="#6b4a2b" stroke-width="2"/>
    <rect x="56" y="54" width="8" height="36" rx="3" fill="#8b5e34"/></g>
    <rect x="46" y="86" width="40" height="9" rx="3" fill="#d9b38c" stroke="#6b4a2b" stroke-width="2"/>`,
  // A microphone.
  reporter: `<rect x="48" y="34" width="24" height="38" rx="12" fill="#e8e8e8" stroke="#555" stroke-width="2"/>
    <path d="M40 60 C40 84 80 84 80 60" stroke="#e8e8e8" stroke-width="4" fill="none"/>
    <path d="M60 80 V92 M48 93 H72" stroke="#e8e8e8" stroke-width="4" stroke-linecap="round"/>`,
  // A star badge.
  police: `<path d="M60 30 L68 50 L90 51 L73 65 L79 87 L60 75 L41 87 L47 65 L30 51 L52 50 Z" fill="#f2c14e" stroke="#9b7413" stroke-width="2.5"/>
    <circle cx="60" cy="60" r="8" fill="#fff3c4"/>`,
};

export function roleCard(role, label, { small = false, aria = null } = {}) {
  const [c1, c2] = ROLE_COLORS[role] || ['#555', '#222'];
  const id = `g-${role}`;
  const el = svg(`<svg class="card-art${small ? ' small' : ''}" viewBox="0 0 120 168" role="img" aria-label="${x(aria || label)}" xmlns="http://www.w3.org/2000/svg">
    <defs><linearGradient id="${id}" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${c1}"/><stop offset="1" stop-color="${c2}"/></linearGradient></defs>
    <rect x="2" y="2" width="116" height="164" rx="10" fill="url(#${id})" stroke="#fff" stroke-opacity=".35" stroke-width="2"/>
    <rect x="9" y="9" width="102" height="150" rx="7" fill="none" stroke="#fff" stroke-opacity=".25"/>
    <g transform="translate(0 6)">${ROLE_ICONS[role] || ''}</g>
    <rect x="9" y="124" width="102" height="28" rx="5" fill="#000" fill-opacity=".28"/>
    <text x="60" y="143" text-anchor="middle" font-size="${label.length > 9 ? 13 : 15}" font-weight="700" fill="#fff" letter-spacing="1" font-family="system-ui,sans-serif">${x(label.toLocaleUpperCase(langTag()))}</text>
  </svg>`);
  return el;
}

export function cardBack(label, { small = false } = {}) {
  return svg(`<svg class="card-art back${small ? ' small' : ''}" viewBox="0 0 120 168" role="img" aria-label="${x(label)}" xmlns="http://www.w3.org/2000/svg">
    <defs><pattern id="bk" width="12" height="12" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
      <rect width="12" height="12" fill="#1b2338"/><path d="M0 0 V12" stroke="#2d3a5c" stroke-width="4"/></pattern></defs>
    <rect x="2" y="2" width="116" height="164" rx="10" fill="url(#bk)" stroke="#c9a227" stroke-width="2"/>
    <circle cx="60" cy="84" r="26" fill="#1b2338" stroke="#c9a227" stroke-width="3"/>
    <path d="M72 72 A16 16 0 1 0 72 96" stroke="#c9a227" stroke-width="6" fill="none" stroke-linecap="round"/>
  </svg>`);
}

// Conspiranoicos -----------------------------------------------------------------------------------

export const FACTION_COLORS = { G: '#3d8b3d', I: '#b8860b', A: '#23968c', R: '#b03a2e' };

// Each faction's symbol, drawn in a 40×40 box centred on (20, 20).
const FACTION_ICONS = {
  // Gnomes: a pointed hat over a beard.
  G: (c) => `<path d="M20 3 L31 22 H9 Z" fill="${c}"/><circle cx="20" cy="26" r="6" fill="#f3d2b3"/>
    <path d="M12 26 Q20 42 28 26 Z" fill="#eee"/>`,
  // Illuminati: the eye in the triangle.
  I: (c) => `<path d="M20 4 L36 34 H4 Z" fill="none" stroke="${c}" stroke-width="3.5" stroke-linejoin="round"/>
    <path d="M11 24 Q20 14 29 24 Q20 32 11 24 Z" fill="#fff" stroke="${c}" stroke-width="2"/><circle cx="20" cy="24" r="3.5" fill="${c}"/>`,
  // Aliens: a grey head with large eyes.
  A: (c) => `<path d="M20 4 C33 4 36 16 33 24 C30 32 24 37 20 37 C16 37 10 32 7 24 C4 16 7 4 20 4 Z" fill="${c}"/>
    <ellipse cx="13.5" cy="20" rx="5" ry="3" transform="rotate(30 13.5 20)" fill="#111"/>
    <ellipse cx="26.5" cy="20" rx="5" ry="3" transform="rotate(-30 26.5 20)" fill="#111"/>`,
  // Reptilians: a slit-pupil eye.
  R: (c) => `<path d="M3 20 Q20 2 37 20 Q20 38 3 20 Z" fill="#e9d44a" stroke="${c}" stroke-width="3"/>
    <ellipse cx="20" cy="20" rx="3" ry="10" fill="#111"/>`,
};

export function factionIcon(f, size = 20) {
  const draw = FACTION_ICONS[f];
  if (!draw) return '';
  return `<svg viewBox="0 0 40 40" width="${size}" height="${size}" aria-hidden="true">${draw(FACTION_COLORS[f])}</svg>`;
}

export function factionBadge(f, label) {
  return svg(`<span class="faction" title="${x(label)}" aria-label="${x(label)}" role="img">${factionIcon(f, 18)}</span>`);
}

function wrap(text, width) {
  const words = String(text).split(/\s+/);
  const lines = [];
  let line = '';
  for (const w of words) {
    if ((line + ' ' + w).trim().length > width && line) { lines.push(line); line = w; } else line = (line + ' ' + w).trim();
  }
  if (line) lines.push(line);
  return lines.slice(0, 3);
}

// card: {id, value, front: ['G','A'], back: 'A', special?: 'abduction'|'all_seeing_eye'|'gnome_revelation'}
// (the deck file's fields); texts: {name?, challenge}
export function evidenceCard(card, texts, { small = false, label } = {}) {
  const fronts = card.front || card.fronts || [];
  const main = fronts[0] ? FACTION_COLORS[fronts[0]] : '#6d4c9f';
  const second = fronts[1] ? FACTION_COLORS[fronts[1]] : main;
  const gid = `ev-${card.id}`;
  let middle = '';
  if (fronts.length === 1) {
    middle = `<g transform="translate(35 38) scale(1.25)">${FACTION_ICONS[fronts[0]](FACTION_COLORS[fronts[0]])}</g>`;
  } else if (fronts.length === 2) {
    middle = `<g transform="translate(14 44) scale(1.05)">${FACTION_ICONS[fronts[0]](FACTION_COLORS[fronts[0]])}</g>
      <g transform="translate(64 44) scale(1.05)">${FACTION_ICONS[fronts[1]](FACTION_COLORS[fronts[1]])}</g>`;
  } else {
    middle = specialArt(card.special);
  }
  const nameSize = texts.name && texts.name.length > 15 ? 9 : 10.5;
  const name = texts.name ? `<text x="60" y="100" text-anchor="middle" font-size="${nameSize}" font-weight="700" fill="#2a1d3d" font-family="system-ui,sans-serif">${x(texts.name)}</text>` : '';
  // The challenge text must stay legible on a phone: large type, short lines.
  const lines = wrap(texts.challenge || '', 15)
    .map((l, i) => `<tspan x="60" dy="${i ? 14 : 0}">${x(l)}</tspan>`).join('');
  const aria = label || `${texts.name ? texts.name + ', ' : ''}${card.value}. ${texts.challenge || ''}`;
  return svg(`<svg class="card-art evidence${small ? ' small' : ''}" viewBox="0 0 120 168" role="img" aria-label="${x(aria)}" xmlns="http://www.w3.org/2000/svg">
    <defs><linearGradient id="${gid}" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${main}"/><stop offset="1" stop-color="${second}"/></linearGradient></defs>
    <rect x="2" y="2" width="116" height="164" rx="10" fill="#fbf6ea" stroke="url(#${gid})" stroke-width="4"/>
    <rect x="8" y="8" width="104" height="96" rx="6" fill="url(#${gid})" fill-opacity=".16"/>
    <circle cx="22" cy="22" r="14" fill="url(#${gid})"/>
    <text x="22" y="28.5" text-anchor="middle" font-size="18" font-weight="800" fill="#fff" font-family="system-ui,sans-serif">${x(card.value)}</text>
    <g transform="translate(92 10) scale(.45)">${FACTION_ICONS[card.back] ? FACTION_ICONS[card.back]('#8a8170') : ''}</g>
    ${middle}${name}
    <line x1="14" y1="110" x2="106" y2="110" stroke="#c8bda5"/>
    <text y="128" font-size="13" font-weight="600" fill="#3b3327" text-anchor="middle" font-family="system-ui,sans-serif">${lines}</text>
  </svg>`);
}

function specialArt(kind) {
  if (kind === 'abduction') {
    return `<g transform="translate(30 26)"><ellipse cx="30" cy="22" rx="28" ry="9" fill="#7d8a99"/><ellipse cx="30" cy="17" rx="13" ry="10" fill="#b9e6f0"/>
      <path d="M14 28 L4 62 H56 L46 28 Z" fill="#f7f09a" fill-opacity=".7"/><circle cx="30" cy="52" r="5" fill="#3d8b3d"/></g>`;
  }
  if (kind === 'all_seeing_eye' || kind === 'eye') {
    return `<g transform="translate(30 24)"><path d="M30 0 L60 54 H0 Z" fill="#e8c65a" stroke="#8a6a10" stroke-width="2"/>
      <path d="M14 38 Q30 22 46 38 Q30 52 14 38 Z" fill="#fff"/><circle cx="30" cy="38" r="6" fill="#3a2a6a"/>
      <path d="M30 -6 V-1 M8 4 L12 8 M52 4 L48 8" stroke="#e8c65a" stroke-width="2"/></g>`;
  }
  if (kind === 'gnome_revelation' || kind === 'gnome') {
    return `<g transform="translate(36 20)"><path d="M24 0 L42 34 H6 Z" fill="#c0392b"/><circle cx="24" cy="42" r="10" fill="#f3d2b3"/>
      <path d="M10 44 Q24 76 38 44 Z" fill="#eee"/><circle cx="20" cy="40" r="1.8"/><circle cx="28" cy="40" r="1.8"/></g>`;
  }
  return '';
}

export function evidenceBack(back, label, { small = false } = {}) {
  const c = FACTION_COLORS[back] || '#555';
  return svg(`<svg class="card-art evidence back${small ? ' small' : ''}" viewBox="0 0 120 168" role="img" aria-label="${x(label)}" xmlns="http://www.w3.org/2000/svg">
    <rect x="2" y="2" width="116" height="164" rx="10" fill="${c}" stroke="#fff" stroke-opacity=".5" stroke-width="2"/>
    <rect x="10" y="10" width="100" height="148" rx="7" fill="none" stroke="#fff" stroke-opacity=".35" stroke-dasharray="4 3"/>
    <circle cx="60" cy="84" r="32" fill="#fff" fill-opacity=".9"/>
    <g transform="translate(36 60) scale(1.2)">${FACTION_ICONS[back] ? FACTION_ICONS[back](c) : ''}</g>
  </svg>`);
}

// The face-down Final Challenge / an unknown card with no back symbol.
export function plainBack(label, { small = false } = {}) {
  return svg(`<svg class="card-art evidence back${small ? ' small' : ''}" viewBox="0 0 120 168" role="img" aria-label="${x(label)}" xmlns="http://www.w3.org/2000/svg">
    <rect x="2" y="2" width="116" height="164" rx="10" fill="#2a2140" stroke="#a58bd6" stroke-width="2"/>
    <text x="60" y="98" text-anchor="middle" font-size="46" font-weight="800" fill="#a58bd6" font-family="Georgia,serif">?</text>
  </svg>`);
}
