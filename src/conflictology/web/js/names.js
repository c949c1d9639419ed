// How a seat is named on screen: the room's name for it, told apart from a look-alike by its seat.
import { has, t } from './i18n.js';

export function nameOf(room, seat) {
  const s = room && room.seats && room.seats.find((x) => x.seat === seat);
  if (s && s.name) return twinName(s, room.seats);
  return t('common.seat', { n: seat + 1 });
}

// A bot is named by its number and its personality (or level) in the reader's language ("Bot 2 · the
// bluffer", "Bot 2 · el farolero"), from the seat's `bot_number` and `level`; never the level's id. A
// mystery bot's seat says only that it is one until the game is over (the server sends "mystery"
// until then). A seat without `bot_number` (a room saved before it) keeps the server's name.
export function shownName(s) {
  if (!s.bot || !Number.isInteger(s.bot_number)) return s.name;
  const n = s.bot_number;
  const who = s.level && s.level !== 'mystery' && has(`levels.${s.level}`) ? t(`levels.${s.level}`) : '';
  if (s.mystery) return who ? t('common.mysteryBotWho', { n, who }) : t('common.mysteryBot', { n });
  return who ? t('common.botWho', { n, who }) : t('common.bot', { n });
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
  const shown = shownName(s);
  const key = skeleton(shown);
  const twins = seats.filter((x) => x.name && skeleton(shownName(x)) === key).length;
  return twins > 1 ? `${shown} (${t('common.seat', { n: s.seat + 1 })})` : shown;
}
