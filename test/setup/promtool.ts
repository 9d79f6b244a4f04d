import { installTools } from './debian-tools.js';

/** promtool, which checks the shipped alert rules (test/scale-out/observability.scale-out.test.ts). */
export default function setup(): void {
  installTools('promtool');
}
