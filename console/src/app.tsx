import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { allows, type Action, type Me } from './access.js';
import { ApiError, createAdminApi } from './api.js';
import { ConsoleContext, describeError, type Console, type Notice } from './context.js';
import { LANGUAGES, pickLanguage, translate, type Lang, type MessageKey, type Translate } from './i18n.js';
import { AuditView } from './views/audit.js';
import { richText } from './ui.js';
import { RefusalsView } from './views/refusals.js';
import { CommandsView } from './views/commands.js';
import { EventsView } from './views/events.js';
import { LockoutsView } from './views/lockouts.js';
import { MapView } from './views/map.js';
import { OverviewView } from './views/overview.js';
import { ProvidersView } from './views/providers.js';
import { VehiclesView } from './views/vehicles.js';

/** sessionStorage: the token lives as long as the tab, never in a URL or on disk. */
const TOKEN_KEY = 'gateway-console.token';
/** localStorage: the operator's language choice outlives the session. */
const LANG_KEY = 'gateway-console.lang';
const NOTICE_MS = 5_000;
const NOTICES_SHOWN = 3;

const ROUTES = ['overview', 'events', 'map', 'providers', 'commands', 'vehicles', 'lockouts', 'refusals', 'audit'] as const;
type Route = (typeof ROUTES)[number];
/** Views only some roles have; the others see every view (with fewer actions). */
const VIEW_NEEDS: Partial<Record<Route, Action>> = { audit: 'audit' };

function routeOf(hash: string): Route {
  const name = hash.replace(/^#\/?/, '');
  return (ROUTES as readonly string[]).includes(name) ? (name as Route) : 'overview';
}

function useHashRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const onChange = (): void => setRoute(routeOf(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function storageGet(storage: Storage, key: string): string | null {
  try {
    return storage.getItem(key);
  } catch {
    return null; // storage disabled: the console still works for this page
  }
}

function storageSet(storage: Storage, key: string, value: string | null): void {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, value);
  } catch {
    // As above.
  }
}

function LanguageSwitch({ lang, onChange, t }: { lang: Lang; onChange: (lang: Lang) => void; t: Translate }) {
  return (
    <div class="lang" role="group" aria-label={t('app.language')}>
      {LANGUAGES.map((l) => (
        <button key={l} type="button" lang={l} aria-pressed={l === lang} class={l === lang ? 'on' : undefined} onClick={() => onChange(l)}>
          {l.toUpperCase()}
        </button>
      ))}
    </div>
  );
}

function Login({ t, message, onToken }: { t: Translate; message: string | null; onToken: (token: string, me: Me) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(message);
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="login card"
      name="login"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        const candidate = token.trim();
        // Who the token is, which also tells a good token from a bad one.
        createAdminApi({ token: candidate })
          .get<Me>('/admin/whoami')
          .then(
            (me) => onToken(candidate, me),
            (err: unknown) => {
              setError(err instanceof ApiError && err.status === 401 ? t('login.invalid') : describeError(t, err));
              setBusy(false);
            },
          );
      }}
    >
      <h1>{t('login.title')}</h1>
      <label>
        <span>{t('login.token')}</span>
        <input name="token" type="password" autocomplete="current-password" required autofocus value={token} onInput={(e) => setToken(e.currentTarget.value)} />
      </label>
      <p class="muted login-hint">
        {richText(t('login.hint'), { command: <code>npx gateway-admin token create NAME --role viewer</code>, file: <code>data/admin-token</code> })}
      </p>
      {error === null ? null : <p class="error" role="alert">{error}</p>}
      <button type="submit" disabled={busy}>{t('login.submit')}</button>
    </form>
  );
}

export function App() {
  const [lang, setLang] = useState<Lang>(() => pickLanguage(storageGet(localStorage, LANG_KEY), navigator.languages));
  const [token, setToken] = useState<string | null>(() => storageGet(sessionStorage, TOKEN_KEY));
  /** Who the token is; loaded again after a reload of the page. */
  const [me, setMe] = useState<Me | null>(null);
  const [meError, setMeError] = useState<string | null>(null);
  const [loginMessage, setLoginMessage] = useState<MessageKey | null>(null);
  const [notices, setNotices] = useState<Notice[]>([]);
  const nextNotice = useRef(1);
  const route = useHashRoute();

  const t = useCallback<Translate>((key: MessageKey, vars) => translate(lang, key, vars), [lang]);
  // A layout effect: the page's language changes in the same frame as its texts (a plain effect
  // ran a frame later, so a screen reader could read Spanish texts as English).
  useLayoutEffect(() => {
    document.documentElement.lang = lang;
    document.title = translate(lang, 'app.title');
  }, [lang]);

  const chooseLang = (l: Lang): void => {
    storageSet(localStorage, LANG_KEY, l);
    setLang(l);
  };
  const signIn = (value: string, who: Me): void => {
    storageSet(sessionStorage, TOKEN_KEY, value);
    setLoginMessage(null);
    setMe(who);
    setToken(value);
  };
  const signOut = useCallback((message: MessageKey | null) => {
    storageSet(sessionStorage, TOKEN_KEY, null);
    setToken(null);
    setMe(null);
    setLoginMessage(message);
  }, []);
  const onUnauthorized = useCallback(() => signOut('login.expired'), [signOut]);

  const notify = useCallback((kind: Notice['kind'], text: string) => {
    const id = nextNotice.current++;
    setNotices((list) => [...list.slice(1 - NOTICES_SHOWN), { id, kind, text }]);
    setTimeout(() => setNotices((list) => list.filter((n) => n.id !== id)), NOTICE_MS);
  }, []);

  // Its own memo, so a language switch does not reload every view.
  const api = useMemo(() => (token === null ? null : createAdminApi({ token, onUnauthorized })), [token, onUnauthorized]);
  const dismiss = (id: number): void => setNotices((list) => list.filter((n) => n.id !== id));

  // A token kept from before a reload: ask who it is (a 401 signs out through onUnauthorized).
  useEffect(() => {
    if (api === null || me !== null) return;
    setMeError(null);
    api.get<Me>('/admin/whoami').then(setMe, (err: unknown) => {
      if (!(err instanceof ApiError && err.status === 401)) setMeError(describeError(t, err));
    });
  }, [api, me]);

  const value = useMemo<Console | null>(
    () => (token === null || api === null || me === null ? null : { api, token, me, allows: (action: Action) => allows(me, action), lang, t, notify }),
    [api, token, me, lang, t, notify],
  );
  const shown = ROUTES.filter((r) => {
    const need = VIEW_NEEDS[r];
    return value !== null && (need === undefined || value.allows(need));
  });
  const view: Route = shown.includes(route) ? route : 'overview';

  const header = (
    <header class="top">
      <strong class="brand">{t('app.title')}</strong>
      {value === null ? null : (
        <nav>
          {shown.map((r) => (
            <a key={r} href={`#/${r}`} class={r === view ? 'on' : undefined} aria-current={r === view ? 'page' : undefined}>
              {t(`nav.${r}`)}
            </a>
          ))}
        </nav>
      )}
      {value === null ? null : (
        <span class="whoami" data-identity={value.me.identity} data-role={value.me.role} title={t('app.signedInAs', { identity: value.me.identity, role: t(`role.${value.me.role}`) })}>
          {value.me.identity} <span class={`badge role-${value.me.role}`}>{t(`role.${value.me.role}`)}</span>
        </span>
      )}
      <LanguageSwitch lang={lang} onChange={chooseLang} t={t} />
      {token === null ? null : <button type="button" class="secondary" onClick={() => signOut(null)}>{t('app.signOut')}</button>}
    </header>
  );

  if (value === null) {
    return (
      <>
        {header}
        <main>
          {token === null ? (
            <Login t={t} message={loginMessage === null ? null : t(loginMessage)} onToken={signIn} />
          ) : meError === null ? (
            <p class="muted">{t('common.loading')}</p>
          ) : (
            <p class="error" role="alert">{meError}</p>
          )}
        </main>
      </>
    );
  }
  return (
    <ConsoleContext.Provider value={value}>
      {header}
      <main>
        {view === 'overview' ? <OverviewView /> : null}
        {view === 'events' ? <EventsView onUnauthorized={onUnauthorized} /> : null}
        {view === 'map' ? <MapView onUnauthorized={onUnauthorized} /> : null}
        {view === 'providers' ? <ProvidersView /> : null}
        {view === 'commands' ? <CommandsView /> : null}
        {view === 'vehicles' ? <VehiclesView /> : null}
        {view === 'lockouts' ? <LockoutsView /> : null}
        {view === 'refusals' ? <RefusalsView /> : null}
        {view === 'audit' ? <AuditView /> : null}
      </main>
      <div class="notices" aria-live="polite">
        {notices.map((n) => (
          <p key={n.id} class={`notice ${n.kind}`} role={n.kind === 'error' ? 'alert' : 'status'} onClick={() => dismiss(n.id)}>
            {n.text}
          </p>
        ))}
      </div>
    </ConsoleContext.Provider>
  );
}
