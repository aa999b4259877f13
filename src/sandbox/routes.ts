// Railyard's own endpoints under /_railyard: what a local sandbox needs and the hosted one
// lacks (the platform's clock and settings, the webhook signing key, the pages that stand
// in for hosted flows). Authenticated like the Grid API, except the hosted-flow pages,
// whose link carries its own token.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../http/route.js';
import { DateTime } from '../http/schemas.js';
import { END_USER_TERMS_VERSION } from '../modules/customers/service.js';
import { documentFile } from '../modules/documents/service.js';
import { auditBooks } from '../ledger/index.js';
import { completeLiveness, describeLiveness } from '../modules/external-accounts/service.js';
import { ExternalAccount } from '../modules/external-accounts/schemas.js';
import { RailyardPlatform, RailyardPlatformUpdate } from '../modules/platform/schemas.js';
import * as platforms from '../modules/platform/service.js';
import { completeKycLink, describeKycLink } from '../modules/verifications/service.js';
import * as scaReset from '../modules/sca/reset.js';
import { revealedDetails } from '../modules/cards/service.js';
import { RailyardCardSimulation } from '../modules/cards/schemas.js';
import { getSimulation } from '../modules/cards/simulations.js';
import { describeInvitation } from '../modules/invitations/service.js';
import { resetRoutes } from './reset-routes.js';
import { serverAdminRoutes } from './server-admin.js';
import { snapshotRoutes } from './snapshots/routes.js';

const tag = 'Railyard';
const Clock = Type.Object({ now: DateTime, offsetSeconds: Type.Number() });
// Amounts as strings: sums over the whole ledger may pass what a JSON number holds exactly.
const LedgerAudit = Type.Object({
  balanced: Type.Boolean(),
  currencies: Type.Array(Type.Object({ currency: Type.String(), entriesSum: Type.String(), postings: Type.Integer() })),
  accounts: Type.Array(
    Type.Object({
      id: Type.String(),
      kind: Type.String(),
      currency: Type.String(),
      available: Type.String(),
      held: Type.String(),
      consistent: Type.Boolean(),
    }),
  ),
});

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export const railyardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // The liveness page posts plain HTML forms; their (empty) bodies carry nothing.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, _body, done) =>
    done(null, undefined),
  );
  await app.register(resetRoutes);
  await app.register(snapshotRoutes);
  await app.register(serverAdminRoutes, { prefix: '/server' });

  app.get(
    '/platform',
    {
      schema: op({
        operationId: 'railyardGetPlatform',
        tag,
        summary: 'This platform as railyard sees it',
        permission: 'VIEW',
        success: { 200: RailyardPlatform },
        errors: [401, 500],
      }),
    },
    async (request) => platforms.getRailyardPlatform(request.ctx),
  );

  app.patch(
    '/platform',
    {
      schema: op({
        operationId: 'railyardUpdatePlatform',
        tag,
        summary: "Change railyard's settings of this platform",
        permission: 'MANAGE',
        body: RailyardPlatformUpdate,
        success: { 200: RailyardPlatform },
        errors: [400, 401, 500],
      }),
    },
    async (request) => platforms.updateRailyardPlatform(request.ctx, request.body),
  );

  app.get(
    '/clock',
    {
      schema: op({
        operationId: 'railyardGetClock',
        tag,
        summary: "Read the platform's sandbox clock",
        permission: 'VIEW',
        success: { 200: Clock },
        errors: [401, 500],
      }),
    },
    async (request) => (await platforms.getRailyardPlatform(request.ctx)).clock,
  );

  app.post(
    '/clock/advance',
    {
      schema: op({
        operationId: 'railyardAdvanceClock',
        tag,
        summary: "Move the platform's sandbox clock forward",
        permission: 'MANAGE',
        body: Type.Object({ seconds: Type.Number({ minimum: 0.001, maximum: platforms.CLOCK_ADVANCE_SECONDS_MAX }) }),
        success: { 200: Type.Object({ now: DateTime, offsetSeconds: Type.Number(), jobsRun: Type.Integer() }) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => {
      const advanced = await platforms.advanceClock(request.ctx, request.body.seconds);
      return { ...advanced.clock, jobsRun: advanced.jobsRun };
    },
  );

  app.get(
    '/ledger',
    {
      schema: op({
        operationId: 'railyardLedgerAudit',
        tag,
        summary: "Re-check the platform's books",
        permission: 'VIEW',
        success: { 200: LedgerAudit },
        errors: [401, 500],
      }),
    },
    async (request) => auditBooks(request.ctx.db, request.ctx.platformId),
  );

  app.get(
    '/webhook-public-key',
    {
      schema: op({
        operationId: 'railyardWebhookPublicKey',
        tag,
        summary: "The PEM public key that verifies this platform's webhooks",
        permission: 'VIEW',
        success: { 200: Type.String() },
        errors: [401, 500],
      }),
    },
    async (request, reply) => {
      reply.type('application/x-pem-file');
      return platforms.webhookPublicKey(request.ctx.db.k, request.ctx.platformId);
    },
  );

  // Stand-in for the hosted liveness check of ownership verification.
  const LivenessParams = Type.Object({ challengeId: Type.String() });
  const LivenessQuery = Type.Object({ token: Type.String() });

  app.get(
    '/liveness/:challengeId',
    {
      schema: { params: LivenessParams, querystring: LivenessQuery },
    },
    async (request, reply) => {
      const check = await describeLiveness(request.server.deps, request.params.challengeId, request.query.token);
      reply.type('text/html; charset=utf-8');
      if (check === undefined) {
        reply.code(404);
        return '<!doctype html><title>Not found</title><p>This liveness link is not valid.</p>';
      }
      const action = (outcome: string) =>
        `${request.url.split('?')[0]}/${outcome}?token=${encodeURIComponent(request.query.token)}`;
      return `<!doctype html><html><head><meta charset="utf-8"><title>railyard liveness check</title></head><body>
<h1>Sandbox liveness check</h1>
<p>Account <code>${escapeHtml(check.accountId)}</code>; this check is <strong>${escapeHtml(check.status)}</strong> and expires at ${escapeHtml(check.expiresAt)}.</p>
<p>No camera here: choose the outcome the platform should receive.</p>
<form method="post" action="${escapeHtml(action('pass'))}"><button type="submit">Pass the check</button></form>
<form method="post" action="${escapeHtml(action('fail'))}"><button type="submit">Fail the check</button></form>
</body></html>`;
    },
  );

  app.post(
    '/liveness/:challengeId/:outcome',
    {
      schema: {
        params: Type.Object({
          challengeId: Type.String(),
          outcome: Type.Union([Type.Literal('pass'), Type.Literal('fail')]),
        }),
        querystring: LivenessQuery,
        response: { 200: Type.Ref(ExternalAccount) },
      },
    },
    async (request) =>
      completeLiveness(
        request.server.deps,
        request.params.challengeId,
        request.query.token,
        request.params.outcome === 'pass',
      ),
  );

  app.get(
    '/card-simulations/:issuerTransactionToken',
    {
      schema: op({
        operationId: 'railyardGetCardSimulation',
        tag,
        summary: 'What came of a card simulation: the card transaction it made or changed, or why it was declined',
        permission: 'VIEW',
        params: Type.Object({ issuerTransactionToken: Type.String() }),
        success: { 200: RailyardCardSimulation },
        errors: [401, 404, 500],
      }),
    },
    async (request) => getSimulation(request.ctx, request.params.issuerTransactionToken),
  );

  // Stand-in for the card processor's reveal iframe (revealCard's panEmbedUrl). The token is
  // in the URL fragment, which the browser keeps: the page posts it, so no log line holds it.
  app.get('/card-reveal', async (_request, reply) => {
    reply.type('text/html; charset=utf-8');
    return `<!doctype html><html><head><meta charset="utf-8"><title>railyard card</title></head><body>
<h1>Sandbox card details</h1><pre id="card">Loading…</pre>
<script>
fetch(location.pathname, { method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ token: location.hash.slice(1) }) })
  .then((r) => r.ok ? r.json() : Promise.reject(r.status))
  .then((c) => { document.getElementById('card').textContent =
    c.pan.replace(/(.{4})/g, '$1 ').trim() + '\\nCVC ' + c.cvc + '  expires ' + String(c.expMonth).padStart(2, '0') + '/' + c.expYear; })
  .catch(() => { document.getElementById('card').textContent = 'This link has expired or is not valid.'; });
</script></body></html>`;
  });

  app.post(
    '/card-reveal',
    { schema: { body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }) } },
    async (request, reply) => {
      const details = await revealedDetails(request.server.deps, request.body.token);
      if (details === undefined) {
        reply.code(404);
        return { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'This reveal link has expired or is not valid' };
      }
      reply.header('cache-control', 'no-store');
      return details;
    },
  );

  // The page an invitation's url opens: who invites, for how much, and whether it can still be claimed.
  app.get(
    '/invitations/:code',
    { schema: { params: Type.Object({ code: Type.String() }) } },
    async (request, reply) => {
      const invitation = await describeInvitation(request.server.deps, request.params.code);
      reply.type('text/html; charset=utf-8');
      if (invitation === undefined) {
        reply.code(404);
        return '<!doctype html><title>Not found</title><p>This invitation link is not valid.</p>';
      }
      return `<!doctype html><html><head><meta charset="utf-8"><title>railyard invitation</title></head><body>
<h1>${escapeHtml(invitation.firstName ?? 'Someone')} invites you</h1>
<p>From <code>${escapeHtml(invitation.inviterUma)}</code>${invitation.amount !== null ? `, with ${escapeHtml(invitation.amount)}` : ''}.</p>
<p>This invitation (<code>${escapeHtml(invitation.code)}</code>) is <strong>${escapeHtml(invitation.status)}</strong>${invitation.expiresAt !== null ? ` and expires at ${escapeHtml(invitation.expiresAt)}` : ''}.</p>
<p>Claim it with POST /invitations/${escapeHtml(invitation.code)}/claim and your UMA address.</p>
</body></html>`;
    },
  );

  // Stand-in for the liveness check of a 2FA reset (startTwoFactorReset's verificationLink).
  const ResetLivenessParams = Type.Object({ token: Type.String() });

  app.get('/sca-resets/:token', { schema: { params: ResetLivenessParams } }, async (request, reply) => {
    const check = await scaReset.describeResetLiveness(request.server.deps, request.params.token);
    reply.type('text/html; charset=utf-8');
    if (check === undefined) {
      reply.code(404);
      return '<!doctype html><title>Not found</title><p>This liveness link is not valid.</p>';
    }
    const action = (outcome: string) => `${request.url.split('?')[0]}/${outcome}`;
    return `<!doctype html><html><head><meta charset="utf-8"><title>railyard 2FA reset</title></head><body>
<h1>Sandbox liveness check: 2FA reset</h1>
<p>Customer <code>${escapeHtml(check.customerId)}</code> is resetting <strong>${escapeHtml(check.factor)}</strong>; the reset is <strong>${escapeHtml(check.status)}</strong> and closes at ${escapeHtml(check.expiresAt)}.</p>
<p>No camera here: choose the outcome. A pass is reviewed for 5 seconds (PENDING_REVIEW), then LIVENESS_PASSED.</p>
<form method="post" action="${escapeHtml(action('pass'))}"><button type="submit">Pass the check</button></form>
<form method="post" action="${escapeHtml(action('fail'))}"><button type="submit">Fail the check</button></form>
</body></html>`;
  });

  app.post(
    '/sca-resets/:token/:outcome',
    {
      schema: {
        params: Type.Object({
          token: Type.String(),
          outcome: Type.Union([Type.Literal('pass'), Type.Literal('fail')]),
        }),
      },
    },
    async (request) =>
      scaReset.answerResetLiveness(request.server.deps, request.params.token, request.params.outcome === 'pass'),
  );

  // Stand-in for the hosted KYC/KYB flow of createCustomerKycLink: the tester decides.
  const KycParams = Type.Object({ linkId: Type.String() });

  app.get(
    '/kyc/:linkId',
    {
      schema: { params: KycParams, querystring: LivenessQuery },
    },
    async (request, reply) => {
      const link = await describeKycLink(request.server.deps, request.params.linkId, request.query.token);
      reply.type('text/html; charset=utf-8');
      if (link === undefined) {
        reply.code(404);
        return '<!doctype html><title>Not found</title><p>This KYC link is not valid.</p>';
      }
      const action = (outcome: string) =>
        `${request.url.split('?')[0]}/${outcome}?token=${encodeURIComponent(request.query.token)}`;
      const kind = link.customerType === 'BUSINESS' ? 'KYB' : 'KYC';
      const forms = link.usable
        ? `<p>No documents to scan here: choose how the ${kind} flow ends.</p>
<form method="post" action="${escapeHtml(action('complete'))}"><button type="submit">Complete the flow (approve the customer)</button></form>
<form method="post" action="${escapeHtml(action('reject'))}"><button type="submit">Reject the customer</button></form>`
        : '<p>This link can no longer be used.</p>';
      return `<!doctype html><html><head><meta charset="utf-8"><title>railyard hosted ${kind}</title></head><body>
<h1>Sandbox hosted ${kind}</h1>
<p>Customer <code>${escapeHtml(link.customerId)}</code> is <strong>${escapeHtml(link.customerStatus)}</strong>; this link is ${escapeHtml(link.linkStatus)} and expires at ${escapeHtml(link.expiresAt)}.</p>
${forms}
</body></html>`;
    },
  );

  app.post(
    '/kyc/:linkId/:outcome',
    {
      schema: {
        params: Type.Object({
          linkId: Type.String(),
          outcome: Type.Union([Type.Literal('complete'), Type.Literal('reject')]),
        }),
        querystring: LivenessQuery,
      },
    },
    async (request, reply) => {
      const result = await completeKycLink(
        request.server.deps,
        request.params.linkId,
        request.query.token,
        request.params.outcome,
      );
      // Like a hosted flow, send the customer back to the platform when it asked for that.
      if (result.redirectUri !== null) return reply.redirect(result.redirectUri, 303);
      return result.customer;
    },
  );

  app.get(
    '/end-user-terms/:version',
    {
      schema: { params: Type.Object({ version: Type.String() }) },
    },
    async (request, reply) => {
      reply.type('text/html; charset=utf-8');
      if (request.params.version !== END_USER_TERMS_VERSION) {
        reply.code(404);
        return '<!doctype html><title>Not found</title><p>No End User Terms of this version.</p>';
      }
      return `<!doctype html><html><head><meta charset="utf-8"><title>End User Terms ${END_USER_TERMS_VERSION}</title></head><body>
<h1>Sandbox End User Terms, version ${END_USER_TERMS_VERSION}</h1>
<p>railyard is a local sandbox: no money moves and no identity is checked. Record a customer's consent to this version
with <code>endUserTermsConsent.termsVersion</code> = <code>${END_USER_TERMS_VERSION}</code>.</p>
</body></html>`;
    },
  );

  app.get(
    '/documents/:documentId/file',
    {
      schema: op({
        operationId: 'railyardDownloadDocument',
        tag,
        summary: 'The stored file of a document, byte for byte',
        permission: 'VIEW',
        params: Type.Object({ documentId: Type.String() }),
        success: { 200: Type.String() },
        errors: [401, 404, 500],
      }),
    },
    async (request, reply) => {
      const file = await documentFile(request.ctx, request.params.documentId);
      reply
        .type(file.contentType)
        .header('content-disposition', `inline; filename="${file.fileName.replace(/["\\\r\n]/g, '_')}"`);
      return file.data;
    },
  );
};
