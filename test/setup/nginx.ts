import { installTools } from './debian-tools.js';

/** nginx and its njs module, for the shipped edge configuration (test/scale-out/edge-nginx.scale-out.test.ts). */
export default function setup(): void {
  installTools('nginx');
}
