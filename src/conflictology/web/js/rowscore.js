// A Conspiranoicos row measured by the scoring criteria, for the live preview while a player arranges
// their own row (issue 17.8). A port of games/conspiranoicos/scoring.py (its functions of one row:
// sequence, run, triple, pairs, majority); tests/web/test_polish.py compares both on the same rows.
// Only the player's own cards go in: what needs the opponent's row (who leads) is left to the end.

// sequence(values, anyOrder) in scoring.py: the longest run of values rising or falling by exactly 1
// between adjacent cards, a repeated value skipped (neither counted nor breaking it); with the option
// `sequence_any_order`, the longest stretch of consecutive values present anywhere in the row.
export function sequence(values, anyOrder = false) {
  if (!values.length) return 0;
  if (anyOrder) {
    const present = [...new Set(values)].sort((a, b) => a - b);
    let best = 0;
    let run = 0;
    let last = null;
    for (const v of present) {
      run = last !== null && v === last + 1 ? run + 1 : 1;
      last = v;
      best = Math.max(best, run);
    }
    return best;
  }
  let best = 1;
  for (const step of [1, -1]) {
    let cur = 1;
    let last = values[0];
    for (let i = 1; i < values.length; i += 1) {
      const v = values[i];
      if (v === last) continue;
      cur = v === last + step ? cur + 1 : 1;
      last = v;
      best = Math.max(best, cur);
    }
  }
  return best;
}

// run(syms): the longest stretch of adjacent cards that all carry one symbol.
export function run(syms) {
  let best = 0;
  for (const s of ['G', 'I', 'A', 'R']) {
    let cur = 0;
    for (const card of syms) {
      cur = card.includes(s) ? cur + 1 : 0;
      best = Math.max(best, cur);
    }
  }
  return best;
}

function readings(card) {
  if (card.length === 2) {
    const [x, y] = card;
    return [[x, y], [y, x], [x], [y]];
  }
  return [card];
}

// triple(syms, T): most non-overlapping occurrences of T as three consecutive symbols of the row's
// best reading (the same dynamic programme as scoring.py).
export function triple(syms, T) {
  const NEG = -1;
  let best = [0, NEG, NEG];
  for (const card of syms) {
    if (!card.length) {
      best = [Math.max(...best), NEG, NEG];
      continue;
    }
    const nxt = [NEG, NEG, NEG];
    for (const reading of readings(card)) {
      let cur = best;
      for (const s of reading) {
        const step = [NEG, NEG, NEG];
        for (let j = 0; j < 3; j += 1) {
          const c = cur[j];
          if (c < 0) continue;
          if (c > step[0]) step[0] = c;
          if (s === T[0] && c > step[1]) step[1] = c;
          if (j && s === T[j]) {
            if (j === 2) {
              if (c + 1 > step[0]) step[0] = c + 1;
            } else if (c > step[j + 1]) step[j + 1] = c;
          }
        }
        cur = step;
      }
      for (let j = 0; j < 3; j += 1) if (cur[j] > nxt[j]) nxt[j] = cur[j];
    }
    best = nxt;
  }
  return Math.max(...best);
}

// pairs(syms, T): for each distinct symbol of T, the cards carrying it halved (rounded down), summed.
export function pairs(syms, T) {
  let total = 0;
  for (const s of new Set(T)) total += Math.floor(syms.filter((card) => card.includes(s)).length / 2);
  return total;
}

// majority(syms, S): how many cards carry S.
export function majority(syms, S) {
  return syms.filter((card) => card.includes(S)).length;
}

// What each card of a row may show (state.py row_symbols): a faction card its front symbols, the
// All-Seeing Eye the symbol S unless it was gained by a swap, any other special card nothing.
export function rowSymbols(cards, S, gained = []) {
  return cards.map((card) => {
    if (!card.special) return [...(card.front || [])];
    if (card.special === 'all_seeing_eye' && !gained.includes(card.id)) return [S];
    return [];
  });
}

// The row's measures and the points it earns on its own (a sequence or run of 3+, T found at least
// once); pairs and majority score against the opponent's row, so only their counts are known here.
export function preview(cards, T, S, { gained = [], anyOrder = false } = {}) {
  const syms = rowSymbols(cards, S, gained);
  const m = {
    sequence: sequence(cards.map((card) => card.value), anyOrder),
    run: run(syms),
    triple: T && T.length === 3 ? triple(syms, T) : 0,
    pairs: T ? pairs(syms, T) : 0,
    majority: S ? majority(syms, S) : 0,
  };
  const sure = (m.sequence >= 3 ? 1 : 0) + (m.run >= 3 ? 1 : 0) + (m.triple >= 1 ? 2 : 0);
  return { ...m, sure };
}
