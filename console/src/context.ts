import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { Action, Me } from './access.js';
import { ApiError, type AdminApi } from './api.js';
import type { Lang, MessageKey, Translate, Vars } from './i18n.js';

export interface Notice {
  id: number;
  kind: 'ok' | 'error';
  text: string;
}

export interface Console {
  api: AdminApi;
  token: string;
  /** Who is signed in (GET /admin/whoami). */
  me: Me;
  /** Whether the signed-in identity may take an action: the console offers no other. */
  allows: (action: Action) => boolean;
  lang: Lang;
  t: Translate;
  notify: (kind: Notice["kind"], text: string) => void;
}

export const ConsoleContext = createContext<Console | null>(null);

export function useConsole(): Console {
  const value = useContext(ConsoleContext);
  if (value === null) throw new Error('useConsole outside the signed-in console');
  return value;
}

/** An error as the operator should read it, in their language. */
export function describeError(t: Translate, err: unknown): string {
  if (err instanceof ApiError) {
    const text = t('error.api', { message: err.message, status: err.status });
    return err.requestId === undefined ? text : `${text} [${err.requestId}]`;
  }
  return t('error.network', { detail: err instanceof Error ? err.message : String(err) });
}

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  reload(): void;
}

/** Loads `load()` now, whenever `deps` change and on reload(); every `pollMs` if given. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[], pollMs?: number): Loaded<T> {
  const { t } = useConsole();
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    let live = true;
    const run = (): void => {
      const ticket = ++latest.current;
      load().then(
        (value) => {
          if (!live || ticket !== latest.current) return;
          setData(value);
          setError(null);
        },
        (err: unknown) => {
          if (live && ticket === latest.current) setError(describeError(t, err));
        },
      ).finally(() => {
        if (live && pollMs !== undefined) timer = setTimeout(run, pollMs);
      });
    };
    run();
    return () => {
      live = false;
      if (timer !== null) clearTimeout(timer);
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data, error, reload };
}

/** Runs an admin action; on success notifies `success` (a message key or text) and calls `then`. */
export function useAction(): (run: () => Promise<string | null>, then?: () => void) => Promise<boolean> {
  const { notify, t } = useConsole();
  return useCallback(
    async (run, then) => {
      try {
        const message = await run();
        if (message !== null) notify('ok', message);
        then?.();
        return true;
      } catch (err) {
        notify('error', describeError(t, err));
        return false;
      }
    },
    [notify, t],
  );
}

export type { MessageKey, Vars };
