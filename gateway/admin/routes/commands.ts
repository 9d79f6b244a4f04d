import { auditTarget } from '../../../shared/backends/operators.js';
import type { CommandState } from '../../../shared/backends/types.js';
import { MAX_LENGTH } from '../../../shared/catalogue/index.js';
import { AdminError, invalid } from '../errors.js';
import { param, PROVIDER, providerOr404, type AdminDeps, type Handler, type Route } from '../route.js';
import { limitOf, onlyFields, onlyQueryParams, positiveIntegerOf, requiredText } from '../validate.js';
import { commandView } from '../views.js';

const STATES: readonly CommandState[] = ['pending', 'in_process', 'succeeded', 'failed', 'expired', 'cancelled'];

export function commandRoutes(deps: AdminDeps): Route[] {
  const { config, backends, clock, logger: log } = deps;

  const queueCommand: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const body = await req.body();
    onlyFields(body, ['cmd', 'unidad', 'equipo']);
    const cmd = requiredText(body, 'cmd', MAX_LENGTH.cmd);
    const unidad = requiredText(body, 'unidad', MAX_LENGTH.dominio);
    const equipo = requiredText(body, 'equipo', MAX_LENGTH.nroSerie);
    await providerOr404(backends, systemUser);
    const now = clock();
    const command = await backends.commands.enqueue({
      systemUser,
      cmd,
      unidad,
      equipo,
      now,
      expiresAt: now + config.commands.ttlMs,
    });
    req.audit.target = auditTarget('provider', systemUser, 'command', String(command.numero));
    log.info({ systemUser, numero: command.numero, cmd, unidad, equipo }, 'admin: command queued');
    return { status: 201, json: commandView(command) };
  };

  /** The provider's commands newest first, a page at a time (`nextBeforeNumero` continues). */
  const listCommands: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    onlyQueryParams(req.query, ['limit', 'beforeNumero']);
    const limit = limitOf(req.query.get('limit'));
    const before = req.query.get('beforeNumero');
    await providerOr404(backends, systemUser);
    const page = await backends.commands.page(
      { systemUser, limit, ...(before === null || before === '' ? {} : { beforeNumero: positiveIntegerOf(before, 'beforeNumero') }) },
      clock(),
    );
    return { status: 200, json: { commands: page.commands.map(commandView), nextBeforeNumero: page.nextBeforeNumero } };
  };

  const cancelCommand: Handler = async (req) => {
    const systemUser = param(req, 'systemUser');
    const numero = positiveIntegerOf(param(req, 'numero'), 'numero');
    await providerOr404(backends, systemUser);
    const result = await backends.commands.cancel(systemUser, numero, clock());
    if (result === null) throw AdminError.of('commandNotFound', { systemUser, numero });
    if (result.outcome === 'not-open') throw AdminError.of('commandNotOpen', { numero, state: result.command.state });
    log.info({ systemUser, numero, deliveries: result.command.deliveries }, 'admin: command cancelled');
    return { status: 200, json: commandView(result.command) };
  };

  /** Every provider's commands (the console's command queues), newest first. */
  const pageCommands: Handler = async (req) => {
    onlyQueryParams(req.query, ['provider', 'state', 'limit', 'beforeNumero']);
    const provider = req.query.get('provider');
    const stateText = req.query.get('state');
    const state = STATES.find((s) => s === stateText);
    if (stateText !== null && stateText !== '' && state === undefined) {
      throw invalid('state', `state must be one of ${STATES.join(', ')}.`);
    }
    const before = req.query.get('beforeNumero');
    const page = await backends.commands.page(
      {
        limit: limitOf(req.query.get('limit')),
        ...(provider ? { systemUser: provider } : {}),
        ...(state === undefined ? {} : { state }),
        ...(before === null || before === '' ? {} : { beforeNumero: positiveIntegerOf(before, 'beforeNumero') }),
      },
      clock(),
    );
    return {
      status: 200,
      json: { commands: page.commands.map((c) => ({ ...commandView(c), systemUser: c.systemUser })), nextBeforeNumero: page.nextBeforeNumero },
    };
  };

  return [
    { pattern: ['admin', 'commands'], handlers: { GET: { role: 'viewer', run: pageCommands } } },
    { pattern: [...PROVIDER, 'commands'], handlers: { GET: { role: 'viewer', run: listCommands }, POST: { role: 'operator', run: queueCommand } } },
    { pattern: [...PROVIDER, 'commands', ':numero', 'cancel'], handlers: { POST: { role: 'operator', run: cancelCommand } } },
  ];
}
