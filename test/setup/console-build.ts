import { buildConsole, describeBuild } from '../../console/build.js';

/**
 * The admin server serves the console from dist/console (console-assets.embedded.test.ts and the
 * browser layer read it): build it (esbuild, well under a second) so the tests run against the
 * current source, and print its first-load size.
 */
export default async function setup(): Promise<void> {
  console.log(describeBuild(await buildConsole()));
}
