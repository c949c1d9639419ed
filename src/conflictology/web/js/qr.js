// The join link as a QR code, drawn as SVG paths by the vendored qrcode-generator (MIT).
import { qrcode } from '../vendor/qrcode.js';
import { svg } from './dom.js';

export function qrSvg(text) {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  const margin = 2;
  let path = '';
  for (let r = 0; r < n; r += 1) {
    for (let c = 0; c < n; c += 1) {
      if (qr.isDark(r, c)) path += `M${c + margin} ${r + margin}h1v1h-1z`;
    }
  }
  const size = n + margin * 2;
  return svg(`<svg viewBox="0 0 ${size} ${size}" width="168" height="168" shape-rendering="crispEdges" aria-hidden="true" xmlns="http://www.w3.org/2000/svg">
    <rect width="${size}" height="${size}" fill="#fff"/><path d="${path}" fill="#111"/></svg>`);
}
