// tests/web/test_motion.py's table: the table screen drawn from a state message as app.js draws it
// (screens/table.js, then motion.after), and what is moving at once, read within the same task (on a
// slow machine a round trip to the test outlasts a flight). Given the seats' names.
async (names) => {
  const i18n = await import('/js/i18n.js');
  const table = await import('/js/screens/table.js');
  const motion = await import('/js/motion.js');
  const capitol = await import('/js/capitol.js');
  const conspiranoicos = await import('/js/conspiranoicos.js');
  let last = null;
  const centre = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
    return { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) }; };
  const seatOf = (el) => { const p = el.closest('.opponents .player[data-seat]');
    return p ? Number(p.dataset.seat) : el.closest('.me-area') ? 'me' : null; };
  const mine = () => document.getAnimations().filter((a) => !(a instanceof CSSAnimation) && !(a instanceof CSSTransition));
  function draw(msg) {
    last = msg;
    const { view, legal = [], you = 0, code = 'MOTION', gameId = 'g1', lang = 'en' } = msg;
    i18n.setLang(lang);
    const room = { game: view.game, status: 'playing', game_id: gameId, seats: names.map((name, seat) => ({ seat, name })) };
    const state = { screen: 'table', code, seat: you, spectator: you === null, token: 't', room,
      msg: { type: 'state', view, legal, deadline: null }, busy: false, ui: {},
      timeouts: { game: gameId, marks: [], note: null, logLen: 0 }, confirmLeave: false };
    const app = { state, tables: { capitol, conspiranoicos }, render: () => draw(last), update() {},
      lang: () => lang, act() {}, send() {}, hostCall() {}, leaveRoom() {}, leaveGame() {} };
    const main = document.getElementById('main');
    main.className = 'screen-table';
    document.body.dataset.screen = 'table';
    main.replaceChildren(table.render(app));
    motion.after(table.context(app), code);
  }
  function facts() {
    const layer = document.getElementById('motion-layer');
    const anims = mine().map((a) => {
      const el = a.effect.target;
      const timing = a.effect.getTiming();
      return { cls: String(el.getAttribute('class') || ''), seat: seatOf(el), pseudo: a.effect.pseudoElement || null,
        lost: !!el.closest('.lost'),
        slot: el.closest('.play-slot') ? [...el.closest('.plays').children].indexOf(el.closest('.play-slot'))
          : el.closest('.pyr-slot') ? `pyramid ${el.closest('.pyr-slot').dataset.slot}` : null,
        inLayer: !!(layer && layer.contains(el)), strip: !!el.closest('[data-testid=latest]'),
        length: timing.duration + timing.delay + timing.endDelay,
        rotate: JSON.stringify(a.effect.getKeyframes()).includes('rotateY') };
    });
    const plaques = [...document.querySelectorAll('[data-motion-plaque]')].map((el) => ({
      seat: seatOf(el), text: el.dataset.motionPlaque, kind: el.dataset.motionPlaqueKind,
      after: getComputedStyle(el, '::after').content !== 'none',
      popped: mine().some((a) => a.effect.target === el && a.effect.pseudoElement === '::after') }));
    const coins = [...document.querySelectorAll('.motion-coin')].map((el) => ({ from: el.dataset.from, to: el.dataset.to,
      amount: Number(el.dataset.amount), text: el.textContent, start: { x: +el.dataset.x0, y: +el.dataset.y0 },
      end: { x: +el.dataset.x1, y: +el.dataset.y1 }, pointer: getComputedStyle(el).pointerEvents }));
    const trips = [...document.querySelectorAll('.motion-cards')].map((el) => ({ kind: el.dataset.kind,
      seat: Number(el.dataset.motionSeat), text: el.querySelector('.motion-count').textContent, start: { x: +el.dataset.x0, y: +el.dataset.y0 },
      end: { x: +el.dataset.x1, y: +el.dataset.y1 } }));
    const reveals = [...document.querySelectorAll('.motion-reveal')].map((el) => ({ seat: Number(el.dataset.motionSeat),
      card: el.dataset.motionCard }));
    const place = (sel) => centre(document.querySelector(sel));
    const seats = {};
    for (const el of document.querySelectorAll('.opponents .player[data-seat]')) {
      seats[el.dataset.seat] = { purse: centre(el.querySelector('.purse')), hand: centre(el.querySelector('.hand')) };
    }
    const me = document.querySelector('.me-area');
    if (me) seats.me = { purse: centre(me.querySelector('.purse')), hand: centre(me.querySelector('.hand')) };
    const strip = document.querySelector('[data-testid=latest]');
    return { anims, plaques, coins, trips, reveals, seats, treasury: place('.treasury .money-big'), deck: place('.pile.deck'),
      layerText: layer ? layer.textContent : '', layerFaces: layer ? layer.querySelectorAll('svg.card-art:not(.back)').length : 0,
      layerPointer: layer ? getComputedStyle(layer).pointerEvents : null, layerKids: layer ? layer.children.length : 0,
      strip: strip ? strip.querySelector('.motion-strip-text').textContent : null,
      stripAfterBanner: !!(strip && strip.previousElementSibling && strip.previousElementSibling.matches('[data-testid=banner]')),
      stripLive: strip ? strip.getAttribute('aria-live') : null,
      toggle: (() => { const b = document.querySelector('[data-k=motion]');
        return b ? { pressed: b.getAttribute('aria-pressed'), disabled: b.disabled, label: b.getAttribute('aria-label') } : null; })() };
  }
  // Drawn and every movement held where it starts (paused in the same task), so a test may look at a
  // flight however slow the machine: where it is, what is under it, and what a later drawing does to it.
  const hold = (msg) => { draw(msg); mine().forEach((a) => a.pause()); const f = facts();
    f.under = [...document.querySelectorAll('#motion-layer > *')].map((el) => { const r = el.getBoundingClientRect();
      const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return at ? (at.closest('#motion-layer') ? 'motion-layer' : at.className || at.tagName) : null; });
    f.held = mine().filter((a) => a.playState === 'paused').length;
    return f; };
  window.motionTest = { draw: (msg) => { draw(msg); return facts(); }, hold, facts, click: (k) => { document.querySelector(`[data-k=${k}]`).click(); return facts(); } };
}
