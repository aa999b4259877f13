// buildApp(deps) assembles the server: kernel (validation, errors, auth, recording, OpenAPI),
// then every area's routes under the Grid base path, then railyard's own endpoints. main.ts
// and the tests both build the server through here, so they run the same thing.

import { randomUUID } from 'node:crypto';
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import sjson from 'secure-json-parse';
import { ADMIN_PREFIX, BASE_PATH, JOURNAL_SIZE_DEFAULT } from './config.js';
import { authenticate, authenticateAgent, cachedPrincipal, checkPermission, type Principal } from './http/auth.js';
import type { Ctx } from './http/context.js';
import type { Deps, Permission } from './http/deps.js';
import {
  answerClientError,
  answerFrameworkError,
  installErrorHandling,
  installStatusCheck,
} from './http/error-handler.js';
import { invalidInput } from './http/errors.js';
import { OpenApiCollector } from './http/openapi.js';
import { PlatformGate } from './http/platform-gate.js';
import { attachJournal, keepBodyText } from './http/journal.js';
import { attachRecorder } from './http/recorder.js';
import { isOperationSchema } from './http/route.js';
import { checkUrl, rewriteBadlyEncodedUrl, ROUTER_PARAM_CHARS_MAX } from './http/url.js';
import {
  BODY_DEPTH_MAX,
  createValidators,
  lazyValidator,
  markStrict,
  nestedDeeperThan,
  nulFields,
} from './http/validation.js';
import { JobRunner } from './jobs/runner.js';
import { beneficialOwnerRoutes } from './modules/beneficial-owners/routes.js';
import { customerImportRoutes } from './modules/customer-imports/routes.js';
import { customerRoutes } from './modules/customers/routes.js';
import { directoryRoutes } from './modules/directory/routes.js';
import { documentRoutes } from './modules/documents/routes.js';
import { customerExternalAccountRoutes, platformExternalAccountRoutes } from './modules/external-accounts/routes.js';
import { platformConfigRoutes } from './modules/platform/routes.js';
import { tokenRoutes } from './modules/tokens/routes.js';
import { verificationRoutes } from './modules/verifications/routes.js';
import { internalAccountRoutes } from './modules/internal-accounts/routes.js';
import { transactionRoutes } from './modules/transactions/routes.js';
import { transferRoutes } from './modules/transfers/routes.js';
import { paymentApprovalRoutes } from './modules/payment-approvals/routes.js';
import { receiverRoutes } from './modules/receivers/routes.js';
import { incomingPaymentRoutes } from './modules/incoming-payments/routes.js';
import { umaProviderRoutes } from './modules/uma-providers/routes.js';
import { cryptoRoutes } from './modules/crypto/routes.js';
import { quoteRoutes } from './modules/quotes/routes.js';
import { webhookDeliveryRoutes, webhookRoutes } from './modules/webhooks/routes.js';
import { walletAuthRoutes } from './modules/wallet-auth/routes.js';
import { agentRoutes } from './modules/agents/routes.js';
import { scaRoutes } from './modules/sca/routes.js';
import { cardRoutes } from './modules/cards/routes.js';
import { invitationRoutes } from './modules/invitations/routes.js';
import { stablecoinRoutes, stablecoinSandboxRoutes } from './modules/stablecoins/routes.js';
import { railyardRoutes } from './sandbox/routes.js';
import { installRequestFaults } from './faults/requests.js';
import { faultRoutes } from './faults/routes.js';
import { dashboardRoutes } from './sandbox/dashboard.js';
import { inspectRoutes } from './modules/inspect/routes.js';
import { JournalWriter } from './modules/requests/journal.js';
import { requestRoutes } from './modules/requests/routes.js';

declare module 'fastify' {
  interface FastifyRequest {
    ctx: Ctx;
  }
  interface FastifyInstance {
    deps: Deps;
  }
}

export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface AppOptions {
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyServerOptions['loggerInstance'];
  /** More routes under the Grid base path (tests of kernel pieces use this). */
  extraRoutes?: FastifyPluginAsync;
}

export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    genReqId: () => randomUUID(),
    requestIdHeader: 'x-request-id',
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    // What the router and Node's HTTP parser refuse on their own leaves in the envelope too
    // (src/http/url.ts, src/http/error-handler.ts).
    rewriteUrl: rewriteBadlyEncodedUrl,
    routerOptions: { maxParamLength: ROUTER_PARAM_CHARS_MAX },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('deps', deps);
  deps.jobs ??= new JobRunner(deps, app.log);
  const jobs = deps.jobs;
  deps.gate ??= new PlatformGate();
  const gate = deps.gate;
  // Closing the server lets running jobs finish after the last request is answered.
  app.addHook('onClose', async () => jobs.stop());
  const journalSize = deps.config.journalSize ?? JOURNAL_SIZE_DEFAULT;
  const journaling = journalSize > 0;
  if (journaling) {
    const journal = new JournalWriter(deps.db, journalSize, app.log);
    deps.journal = journal;
    attachJournal(app, journal, deps.clock);
    // After the last request is answered (the server's own close runs first), what waits is written.
    app.addHook('onClose', async () => journal.close());
  }
  const validators = createValidators();
  // Each route's validators are compiled on its first request, not at start-up: compiling
  // the schemas of some 170 routes took most of a second of every start.
  app.setValidatorCompiler(({ schema, httpPart }) =>
    lazyValidator(() => validators.compile(schema as never, httpPart === 'body' ? 'body' : 'text')),
  );
  app.setSerializerCompiler(({ schema }) => {
    if (!deps.config.validateResponses) return (data) => JSON.stringify(data);
    const validate = lazyValidator(() => validators.compile(schema as never, 'body'));
    return (data) => {
      if (!validate(data)) {
        throw new Error(`response does not match its own schema: ${JSON.stringify(validate.errors?.slice(0, 5))}`);
      }
      return JSON.stringify(data);
    };
  });

  // JSON bodies: an empty body counts as no body (clients send Content-Type on bodiless
  // POSTs); prototype-poisoning keys are rejected. Only JSON is accepted elsewhere.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    if (nestedDeeperThan(text)) {
      // Refused unread, so nothing walks it; an operation that takes no body just ignores it.
      const schema = request.routeOptions.schema;
      if (isOperationSchema(schema) && schema.body === undefined) return done(null, undefined);
      return done(invalidInput([{ field: 'body', message: `nests deeper than ${BODY_DEPTH_MAX} levels` }]), undefined);
    }
    try {
      const parsed: unknown = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
      // JSON can carry U+0000 only as this escape, so most bodies skip the walk.
      const nul = text.includes('\\u0000') ? nulFields(parsed) : [];
      // The journal keeps the text as received (no copy, no serializing it again later).
      if (journaling) keepBodyText(request, text);
      done(nul.length > 0 ? invalidInput(nul) : null, parsed);
    } catch (err) {
      const error = err as Error & { statusCode?: number; code?: string };
      error.statusCode = 400;
      error.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
      done(error, undefined);
    }
  });

  installErrorHandling(app, validators);
  if (deps.config.validateResponses) installStatusCheck(app, validators);
  if (deps.config.recordFile) attachRecorder(app, deps.config.recordFile);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  const openapi = new OpenApiCollector();
  openapi.attach(app);

  app.decorateRequest('ctx', null as unknown as Ctx);
  app.decorateRequest('faultRules', null);
  // A request of a platform counts as running from its authentication to its end, so that a
  // restore or reset of the platform runs between requests (http/platform-gate.ts).
  app.addHook('onResponse', (request, _reply, done) => {
    gate.leave(request);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    gate.leave(request);
    done();
  });
  const attach = (request: FastifyRequest, principal: Principal, needed: Permission, declares403: boolean) => {
    request.faultRules = principal.faultRules;
    request.ctx = {
      deps,
      db: deps.db,
      platformId: principal.platformId,
      settings: principal.settings,
      tokenId: principal.tokenId,
      now: principal.now,
      log: request.log,
    };
    // After ctx: a request refused for its permission still belongs to the platform's journal.
    checkPermission(principal, needed, declares403);
  };
  // A callback hook, so a request whose credentials are already verified (the common case)
  // passes without a promise round-trip.
  const authHook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const admitted = (): boolean => {
      const closed = gate.admit(request, request.ctx.platformId);
      if (closed === undefined) {
        // A client gone before its request was admitted (it waited at the gate) had its abort
        // already: counted now, the request would hold up the platform's next restore for good.
        if (request.raw.socket?.destroyed === true) gate.leave(request);
        return true;
      }
      // The platform's state is being replaced: authenticate again once it is done.
      void closed.then(() => authHook(request, reply, done));
      return false;
    };
    const schema = request.routeOptions.schema;
    if (!isOperationSchema(schema) || schema['x-permission'] === null) return done();
    if (schema['x-auth'] === 'agent') {
      authenticateAgent(deps, request.headers.authorization).then((agent) => {
        request.ctx = {
          deps,
          db: deps.db,
          platformId: agent.platformId,
          settings: agent.settings,
          tokenId: null,
          agent: { id: agent.agentId, customerId: agent.customerId },
          now: agent.now,
          log: request.log,
        };
        request.faultRules = agent.faultRules;
        if (admitted()) done();
      }, done);
      return;
    }
    const needed = schema['x-permission'];
    const declares403 = schema.response[403] !== undefined;
    try {
      const cached = cachedPrincipal(deps, request.headers.authorization);
      if (cached !== undefined) {
        attach(request, cached, needed, declares403);
        if (admitted()) done();
        return;
      }
    } catch (err) {
      return done(err as Error);
    }
    authenticate(deps, request.headers.authorization).then(
      (principal) => {
        try {
          attach(request, principal, needed, declares403);
          if (admitted()) done();
        } catch (err) {
          done(err as Error);
        }
      },
      (err: Error) => done(err),
    );
  };

  // An operation whose body is optional sees an absent body as {} (so it validates as one).
  // A platform in strict mode has its body checked against the strict rules too (StrictRules).
  const prepareBody = (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    const schema = request.routeOptions.schema;
    if (request.body === undefined && isOperationSchema(schema) && schema['x-body-optional'] === true)
      request.body = {};
    if (request.ctx?.settings.strictIdentifiers === true) markStrict(request.body);
    done();
  };

  await app.register(
    async (grid) => {
      grid.addHook('onRequest', authHook);
      grid.addHook('preValidation', checkUrl);
      grid.addHook('preValidation', prepareBody);
      // The platform's fault rules: after authentication, before validation and the handler.
      installRequestFaults(grid, deps);
      await grid.register(platformConfigRoutes);
      await grid.register(tokenRoutes);
      await grid.register(platformExternalAccountRoutes);
      await grid.register(customerRoutes);
      await grid.register(customerImportRoutes);
      await grid.register(verificationRoutes);
      await grid.register(beneficialOwnerRoutes);
      await grid.register(documentRoutes);
      await grid.register(customerExternalAccountRoutes);
      await grid.register(directoryRoutes);
      await grid.register(internalAccountRoutes);
      await grid.register(walletAuthRoutes);
      await grid.register(transferRoutes);
      await grid.register(transactionRoutes);
      await grid.register(webhookRoutes);
      await grid.register(paymentApprovalRoutes);
      await grid.register(receiverRoutes);
      await grid.register(incomingPaymentRoutes);
      await grid.register(umaProviderRoutes);
      await grid.register(cryptoRoutes);
      await grid.register(quoteRoutes);
      await grid.register(agentRoutes);
      await grid.register(scaRoutes);
      await grid.register(cardRoutes);
      await grid.register(invitationRoutes);
      await grid.register(stablecoinRoutes);
      if (options.extraRoutes) await grid.register(options.extraRoutes);
      grid.get('/openapi.json', async () => openapi.document());
    },
    { prefix: BASE_PATH },
  );

  await app.register(
    async (admin) => {
      admin.addHook('onRequest', authHook);
      admin.addHook('preValidation', checkUrl);
      await admin.register(railyardRoutes);
      await admin.register(webhookDeliveryRoutes);
      await admin.register(stablecoinSandboxRoutes);
      await admin.register(inspectRoutes);
      await admin.register(faultRoutes);
      await admin.register(requestRoutes);
      await admin.register(dashboardRoutes);
      admin.get('/openapi.json', async () => openapi.document(ADMIN_PREFIX));
    },
    { prefix: ADMIN_PREFIX },
  );

  app.get('/health', async (_request, reply) => {
    try {
      await deps.db.k.selectFrom('platforms').select('id').limit(1).execute();
      return { status: 'ok', store: deps.db.dialect };
    } catch {
      reply.code(503);
      return { status: 'unavailable', store: deps.db.dialect };
    }
  });

  await app.ready();
  return app;
}
