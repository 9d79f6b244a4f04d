import { installTools } from './debian-tools.js';

/** Debian's Chromium, which playwright-core drives (it downloads no browser of its own). */
export default function setup(): void {
  installTools('chromium');
}
