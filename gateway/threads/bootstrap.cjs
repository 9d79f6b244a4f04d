// @ts-check
/**
 * The first code of a front-end thread. Plain CommonJS, because it is what makes TypeScript
 * loadable in the thread: node runs it as it is under the compiled build, tsx and vitest alike.
 * When the entry is TypeScript it registers tsx's loader, then imports the entry. An error before
 * the entry took over is reported to the main thread as fatal (FromFrontEnd in protocol.ts).
 */
const { parentPort, workerData } = require('node:worker_threads');

/** @type {{ entry: string, tsx: string | null }} (FrontEndData in protocol.ts) */
const data = workerData;

(async () => {
  if (data.tsx !== null) (await import(data.tsx)).register();
  await import(data.entry);
})().catch((/** @type {unknown} */ error) => {
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  parentPort?.postMessage({ type: 'fatal', error: { unavailable: false, name, message } });
});
