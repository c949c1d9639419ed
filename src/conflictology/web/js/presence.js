// Whether a seat's player is there, as a tag on their seat: away (a bot plays for them), or dropped
// mid-game with the seconds left before a bot stands in (the room's `away_until`, counted down by
// frame.js's tick like every deadline), from the room's seats alone.
import { h } from './dom.js';
import { t } from './i18n.js';

export function presenceTag(room, seat) {
  const s = room && room.seats && room.seats.find((x) => x.seat === seat);
  if (!s) return null;
  if (s.afk || s.left) return h('span', { class: 'tag away' }, t('common.away'));
  if (s.bot || s.connected !== false || room.status !== 'playing') return null;
  if (typeof s.away_until !== 'number') return h('span', { class: 'tag away dropped', 'data-testid': 'dropped' }, t('common.dropped'));
  return h('span', { class: 'tag away dropped', 'data-testid': 'dropped', 'data-deadline': String(s.away_until),
    role: 'timer', 'aria-label': t('common.droppedLabel') },
  t('common.droppedFor'), ' ', h('span', { class: 'countdown-num' }, ''));
}
