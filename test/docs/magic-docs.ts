// The docs' tables of sandbox magic values, rendered from src/rails/magic.ts.
//
// Each table sits in a page between `<!-- magic: NAME -->` and `<!-- /magic -->`. A block
// naming one magic table (an exported array of rows with `behaviour` and `source`) holds
// that table, one line per row, plus an "anything else" line; a block naming constants
// holds one line per constant with its value. test/docs/magic.test.ts fails when a block
// differs from its rendering, and `npm run docs:magic` (test/docs/write-magic.mjs) rewrites
// every block. Nothing here holds a magic value: values, suffixes, names and behaviours
// come from magic.ts; the only prose kept here is what magic.ts has no words for (the
// fallback of each table, checked against the lookup functions, and what each constant is
// for), and the test fails when magic.ts gains or loses a table or a constant. One more block,
// `<!-- magic: HOSTED_SETTLEMENT -->`, holds the table of src/rails/settlement.ts (how long a
// bank payout stays PROCESSING on a `hosted` platform), kept in step the same way.

import * as magic from '../../src/rails/magic.js';
import { HOSTED_SETTLEMENT } from '../../src/rails/settlement.js';

/** One column drawn from a row's outcome. */
interface Column {
  title: string;
  cell: (outcome: any) => string;
}

export interface TableSpec {
  /** The row field that holds the magic value. */
  key: 'suffix' | 'name';
  /** Columns between the value and the behaviour. */
  columns?: Column[];
  /** The fallback row: what any other value does, and how the test checks that it is so. */
  otherwise: {
    label: string;
    behaviour: string;
    /** The outcome the lookup gives for a value in no row. */
    expected: unknown;
    probe: () => unknown;
  };
  /** The export that holds the fallback outcome, when magic.ts exports one. */
  defaultExport?: string;
}

const code = (value: string | undefined): string => (value === undefined || value === '' ? '' : `\`${value}\``);

export const TABLES: Record<string, TableSpec> = {
  BENEFICIARY_VERIFICATION: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: "beneficiaryVerificationStatus MATCHED, with the beneficiary's name as the verified name",
      expected: { kind: 'status', status: 'MATCHED' },
      probe: () => magic.beneficiaryVerificationFor('000123456999'),
    },
    defaultExport: 'BENEFICIARY_VERIFICATION_DEFAULT',
  },
  INDIVIDUAL_KYC: {
    key: 'suffix',
    columns: [{ title: 'kycStatus at creation', cell: (outcome) => code(outcome.kycStatusAtCreation) }],
    otherwise: {
      label: 'anything else',
      behaviour: 'created APPROVED; POST /verifications answers 400',
      expected: { kycStatusAtCreation: 'APPROVED', completeSubmission: 'PENDING_MANUAL_REVIEW' },
      probe: () => magic.individualKycFor('Ada Lovelace'),
    },
    defaultExport: 'INDIVIDUAL_KYC_DEFAULT',
  },
  BUSINESS_KYB: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'kybStatus and verificationStatus APPROVED at once, nothing validated',
      expected: 'APPROVE',
      probe: () => magic.businessKybFor('HRB 999'),
    },
    defaultExport: 'BUSINESS_KYB_DEFAULT',
  },
  BENEFICIAL_OWNER_KYC: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'the owner is APPROVED when the business resolves',
      expected: 'APPROVED',
      probe: () => magic.beneficialOwnerKycFor('Lovelace'),
    },
    defaultExport: 'BENEFICIAL_OWNER_KYC_DEFAULT',
  },
  TRANSFER_SCENARIOS: {
    key: 'suffix',
    columns: [
      { title: 'Transfer-out failureReason', cell: (outcome) => code(outcome.outgoingFailureReason) },
      { title: 'Transfer-in failureReason', cell: (outcome) => code(outcome.incomingFailureReason) },
    ],
    otherwise: {
      label: 'anything else',
      behaviour:
        "COMPLETED: a transfer-in at once; a transfer-out at once on an instant platform, after its rail's settlement time on a hosted one",
      expected: { failAfterMs: null },
      probe: () => magic.transferScenarioFor('000123456999'),
    },
    defaultExport: 'TRANSFER_SCENARIO_DEFAULT',
  },
  QUOTE_EXECUTION_SCENARIOS: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: "COMPLETED: at once on an instant platform, after the rail's settlement time on a hosted one",
      expected: { kind: 'COMPLETE', afterMs: 0 },
      probe: () => magic.quoteExecutionScenarioFor('000123456999'),
    },
    defaultExport: 'QUOTE_EXECUTION_DEFAULT',
  },
  SPARK_QUOTE_EXECUTION_SCENARIOS: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'COMPLETED at once',
      expected: { kind: 'COMPLETE', afterMs: 0 },
      probe: () => magic.quoteExecutionScenarioFor('spark1sandbox999', 'SPARK_WALLET'),
    },
  },
  PULL_SOURCE_SCENARIOS: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'the pull finds the funds and the execution goes on',
      expected: undefined,
      probe: () => magic.pullSourceScenarioFor('000123456999'),
    },
  },
  SANDBOX_UMA_ADDRESSES: {
    key: 'name',
    columns: [
      { title: 'Currency', cell: (outcome) => code(outcome.currency) },
      { title: 'Lookup scenario', cell: (outcome) => code(outcome.scenario) },
    ],
    otherwise: {
      label: 'any other name, or any other domain',
      behaviour: '404 UMA_NOT_FOUND, when paying it and for a payment from it',
      expected: undefined,
      probe: () => magic.sandboxUmaCounterpartyFor('$nobody@sandbox.uma.money'),
    },
  },
  CARD_ISSUANCE: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'ACTIVE at once',
      expected: { kind: 'ACTIVE', afterMs: 0 },
      probe: () => magic.cardIssuanceFor('card-999'),
    },
    defaultExport: 'CARD_ISSUANCE_DEFAULT',
  },
  CARD_FUNDING_BINDING: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'eligible',
      expected: { kind: 'ELIGIBLE' },
      probe: () => magic.cardFundingBindingFor('InternalAccount:0000-999'),
    },
  },
  CARD_DECISIONS: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'approved',
      expected: { kind: 'APPROVE', pull: 'CONFIRMED', afterMs: 0 },
      probe: () => magic.cardDecisionFor('CORNER CAFE 999'),
    },
    defaultExport: 'CARD_DECISION_DEFAULT',
  },
  STABLECOIN_PROVIDER_LINKS: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'the link is ACTIVE',
      expected: { kind: 'ACTIVE' },
      probe: () => magic.stablecoinLinkOutcomeFor('client-999'),
    },
    defaultExport: 'STABLECOIN_PROVIDER_LINK_DEFAULT',
  },
  STABLECOIN_REGISTRATIONS: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'provisioned, on the timeline above',
      expected: 'PROVISIONED',
      probe: () => magic.stablecoinRegistrationFor('token-999'),
    },
    defaultExport: 'STABLECOIN_REGISTRATION_DEFAULT',
  },
  STABLECOIN_OPERATIONS: {
    key: 'suffix',
    otherwise: {
      label: 'anything else',
      behaviour: 'COMPLETED, on the timeline above',
      expected: { kind: 'COMPLETE' },
      probe: () => magic.stablecoinOperationScenarioFor('000123456999'),
    },
    defaultExport: 'STABLECOIN_OPERATION_DEFAULT',
  },
};

/** What each constant of magic.ts is for (Markdown); its value is read from magic.ts. */
export const CONSTANTS: Record<string, string> = {
  SANDBOX_VALID_SIGNATURE:
    'passes wallet ownership verification on every network, and is taken in place of a wallet stamp',
  SANDBOX_OTP_CODE: 'the code every `EMAIL_OTP` and `SMS_OTP` challenge of an embedded wallet accepts',
  SANDBOX_VALID_PASSKEY_SIGNATURE:
    "as a passkey assertion's `signature`, skips the WebAuthn check (credential and challenge still must match)",
  SANDBOX_RETIRED_OIDC_TOKEN: 'refused with a 400 naming `oidcToken`, as it is not JWT-shaped',
  CONTACT_VERIFICATION_CODE: 'the only code that verifies an email address or a phone number',
  SCA_SANDBOX_CODE: 'the code of every SCA proof: logins, payment authorizations, trusted beneficiaries',
  SANDBOX_UMA_DOMAINS: 'the domains of the sandbox UMA addresses (either spelling, any case)',
  TRANSFER_TIMEOUT_MS: 'how long a `005` transfer stays pending before it fails',
  QUOTE_SLOW_PAYOUT_MS: 'how long a `003` quote payout stays `PROCESSING` before it completes',
  QUOTE_RETURN_AFTER_MS: 'how long after completing a `005` quote payout comes back',
  UMA_PENDING_LONG_MS: 'how long a payment of `pending.long.usd` stays pending before it completes',
  CARD_ACTIVATION_DELAY_MS: 'how long after issuance a `005` card becomes `ACTIVE`',
  CARD_PULL_DELAY_MS: 'how long the pull of a `005` card authorization stays pending',
  STABLECOIN_LINK_REVOKE_AFTER_MS: 'how long after linking a `003` provider link is revoked',
};

export interface MagicRowLike {
  suffix?: string;
  name?: string;
  outcome: unknown;
  behaviour: string;
  source: string;
}

/** The behaviour text in Markdown: requests, codes and field names as code, pipes escaped. */
export function formatBehaviour(text: string): string {
  const request = /\b(?:GET|POST|PATCH|PUT|DELETE) \/[\w/{}.-]*/g;
  const code = /\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b|\b[A-Z]{3,}\b|\b[a-z]+[A-Z][A-Za-z]*(?:\.[a-z]+[A-Za-z]*)?\b/g;
  const parts = text.replaceAll('|', '\\|').split(request);
  const requests = text.replaceAll('|', '\\|').match(request) ?? [];
  return parts
    .map((part, i) => part.replace(code, (token) => `\`${token}\``) + (i < requests.length ? `\`${requests[i]}\`` : ''))
    .join('');
}

function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? '1 hour' : `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return ms === 60_000 ? '1 minute' : `${ms / 60_000} minutes`;
  return `${ms / 1000} seconds`;
}

function formatValue(name: string, value: unknown): string {
  if (typeof value === 'number' && name.endsWith('_MS')) return `${formatDuration(value)} of sandbox time`;
  if (Array.isArray(value)) return value.map((item) => `\`${String(item)}\``).join(', ');
  return `\`${String(value)}\``;
}

const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;

export function renderTable(name: string): string {
  const spec = TABLES[name];
  const rows = (magic as Record<string, unknown>)[name] as readonly MagicRowLike[] | undefined;
  if (spec === undefined || rows === undefined) throw new Error(`${name} is not a magic table of src/rails/magic.ts`);
  const columns = spec.columns ?? [];
  const head = [spec.key === 'suffix' ? 'Suffix' : 'Name', ...columns.map((column) => column.title), 'What happens'];
  const lines = [line(head), line(head.map(() => '---'))];
  for (const row of rows) {
    const value = spec.key === 'suffix' ? row.suffix : row.name;
    lines.push(
      line([`\`${value}\``, ...columns.map((column) => column.cell(row.outcome)), formatBehaviour(row.behaviour)]),
    );
  }
  const fallback = spec.otherwise.expected;
  lines.push(
    line([
      spec.otherwise.label,
      ...columns.map((column) => (fallback === undefined ? '' : column.cell(fallback))),
      formatBehaviour(spec.otherwise.behaviour),
    ]),
  );
  return lines.join('\n');
}

export function renderConstants(names: string[]): string {
  const lines = [line(['Constant', 'Value', 'What it is']), line(['---', '---', '---'])];
  for (const name of names) {
    const meaning = CONSTANTS[name];
    const value = (magic as Record<string, unknown>)[name];
    if (meaning === undefined || value === undefined)
      throw new Error(`${name} is not a documented constant of src/rails/magic.ts`);
    lines.push(line([`\`${name}\``, formatValue(name, value), meaning]));
  }
  return lines.join('\n');
}

/**
 * The block that names the table of hosted settlement times (src/rails/settlement.ts): not a
 * magic value, but a table of the sandbox's behaviour the docs show and keep in step the same way.
 */
export const SETTLEMENT_BLOCK = 'HOSTED_SETTLEMENT';

export function renderSettlement(): string {
  const lines = [line(['Rails', 'PROCESSING for', 'Why this time']), line(['---', '---', '---'])];
  for (const row of HOSTED_SETTLEMENT) {
    lines.push(
      line([
        row.rails.map((rail) => `\`${rail}\``).join(', '),
        formatDuration(row.seconds * 1000),
        formatBehaviour(row.why),
      ]),
    );
  }
  lines.push(
    line([
      'no bank rail (wallets, Lightning, Spark, UMA, internal accounts)',
      'none',
      'not a bank payout: as the magic value says',
    ]),
  );
  return lines.join('\n');
}

/** A block names one magic table, or one or more constants, or the settlement table. */
export function renderBlock(names: string[]): string {
  if (names.length === 1 && names[0] === SETTLEMENT_BLOCK) return renderSettlement();
  if (names.length === 1 && names[0]! in TABLES) return renderTable(names[0]!);
  return renderConstants(names);
}

export interface MagicBlock {
  names: string[];
  body: string;
  /** Offsets of the body in the page. */
  start: number;
  end: number;
}

const BLOCK = /<!-- magic: ([A-Z0-9_ ]+?) -->\n([\s\S]*?)<!-- \/magic -->/g;

export function findBlocks(markdown: string): MagicBlock[] {
  return [...markdown.matchAll(BLOCK)].map((match) => {
    const start = match.index! + match[0].indexOf('\n') + 1;
    return { names: match[1]!.split(' '), body: match[2]!, start, end: start + match[2]!.length };
  });
}

/** The page with every block's body replaced by its rendering. */
export function rewriteMagicBlocks(markdown: string): string {
  let out = '';
  let at = 0;
  for (const block of findBlocks(markdown)) {
    out += `${markdown.slice(at, block.start)}${renderBlock(block.names)}\n`;
    at = block.end;
  }
  return out + markdown.slice(at);
}
