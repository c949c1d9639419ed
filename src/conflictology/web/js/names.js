// How a seat is named on screen: the room's name for it, told apart from a look-alike by its seat.
import { t } from './i18n.js';

export function nameOf(room, seat) {
  const s = room && room.seats && room.seats.find((x) => x.seat === seat);
  if (s && s.name) return twinName(s, room.seats);
  return t('common.seat', { n: seat + 1 });
}

// Two names that look alike ("Ana" and a Cyrillic "Аna", a full-width "Ａna", a room saved before the
// server numbered twins) are told apart by their seat everywhere a name is shown (17.12).
const LOOKALIKE = { 'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't',
  'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'α': 'a', 'β': 'b', 'ε': 'e', 'ζ': 'z', 'η': 'n', 'ι': 'i', 'κ': 'k',
  'μ': 'm', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x' };

function skeleton(name) {
  return String(name).normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase()
    .replace(/./gu, (ch) => LOOKALIKE[ch] || ch).replace(/\s+/g, ' ').trim();
}

export function twinName(s, seats) {
  const key = skeleton(s.name);
  const twins = seats.filter((x) => x.name && skeleton(x.name) === key).length;
  return twins > 1 ? `${s.name} (${t('common.seat', { n: s.seat + 1 })})` : s.name;
}
