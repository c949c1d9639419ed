// WCAG 2.x contrast of every visible text on the page, computed from the colours as drawn: the text's
// colour over every translucent background behind it, composited, with the opacity of each ancestor
// (an element at half opacity blends its text with what is behind it). Disabled controls are exempt
// (WCAG 1.4.3, "inactive user interface components"). Returns the texts below AA (4.5:1; 3:1 for
// large text), each with its class and ratio. Evaluated by tests/test_web_a11y.py.
() => {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => {
    const x = lum(a), y = lum(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };
  // The page's background is a gradient from #1c2747 to --bg: its lighter end is the harder case for
  // light text.
  const page = [28, 39, 71, 1];
  const bgOf = (el) => {
    const chain = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) chain.push(e);
    let bg = page;
    for (const e of chain.reverse()) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) bg = over(c, bg);
    }
    return bg;
  };
  const opacityOf = (el) => {
    let o = 1;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  const fails = [];
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || seen.has(el) || !n.textContent.trim()) continue;
    seen.add(el);
    if (el.closest('svg, [aria-hidden=true], .sr-only, noscript, option, :disabled, [hidden]')) continue;
    const dialog = el.closest('dialog');
    if (dialog && !dialog.open) continue;
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || s.visibility === 'hidden') continue;
    const bg = bgOf(el);
    const fg = over(parse(s.color), bg);
    const shown = over([fg[0], fg[1], fg[2], opacityOf(el)], bg);
    const size = parseFloat(s.fontSize);
    const bold = Number(s.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const got = ratio(shown, bg);
    if (got < need) {
      fails.push(`${n.textContent.trim().slice(0, 30)} [${el.className || el.tagName}] ${got.toFixed(2)}:1`);
    }
  }
  return fails;
}
