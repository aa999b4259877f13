// The sandbox's magic values: every input that selects a simulated outcome, in one place.
// Each row names the behaviour it produces and where that behaviour is specified
// (SERVICE-SPEC.md section or behaviours.md paragraph). Services ask this module; they
// never compare suffixes themselves.

/**
 * The three characters that select a scenario: the end of the identifier, or for an
 * identifier with a domain part (user.002@bank.example) the end of the part before '@'.
 */
export function scenarioSuffix(identifier: string): string {
  const at = identifier.lastIndexOf('@');
  const local = at > 0 ? identifier.slice(0, at) : identifier;
  return local.slice(-3);
}

export interface MagicRow<Outcome> {
  suffix: string;
  outcome: Outcome;
  /** What the tester sees, in words. */
  behaviour: string;
  source: string;
}

function lookup<Outcome>(rows: readonly MagicRow<Outcome>[], fallback: Outcome, suffix: string): Outcome {
  return rows.find((row) => row.suffix === suffix)?.outcome ?? fallback;
}

// ---------------------------------------------------------------------------------------
// Beneficiary name verification at external-account creation (suffix of the primary
// identifier; the 1xx range does not collide with transfer or quote scenarios).

export type BeneficiaryVerificationOutcome =
  | { kind: 'status'; status: 'MATCHED' | 'PARTIAL_MATCH' | 'NOT_MATCHED' | 'PENDING' | 'UNSUPPORTED' | 'CHECKED_BY_RECEIVING_FI' }
  | { kind: 'reject' };

const beneficiarySource = 'SERVICE-SPEC.md, Sandbox behaviour: beneficiary name verification';

export const BENEFICIARY_VERIFICATION: readonly MagicRow<BeneficiaryVerificationOutcome>[] = [
  { suffix: '102', outcome: { kind: 'status', status: 'NOT_MATCHED' }, behaviour: 'beneficiaryVerificationStatus NOT_MATCHED', source: beneficiarySource },
  { suffix: '103', outcome: { kind: 'status', status: 'PARTIAL_MATCH' }, behaviour: 'beneficiaryVerificationStatus PARTIAL_MATCH, with a verified name that differs slightly', source: beneficiarySource },
  { suffix: '104', outcome: { kind: 'status', status: 'PENDING' }, behaviour: 'beneficiaryVerificationStatus PENDING', source: beneficiarySource },
  { suffix: '105', outcome: { kind: 'reject' }, behaviour: 'creation fails with 400 INVALID_BANK_ACCOUNT', source: beneficiarySource },
  { suffix: '106', outcome: { kind: 'status', status: 'UNSUPPORTED' }, behaviour: 'beneficiaryVerificationStatus UNSUPPORTED', source: beneficiarySource },
  { suffix: '107', outcome: { kind: 'status', status: 'CHECKED_BY_RECEIVING_FI' }, behaviour: 'beneficiaryVerificationStatus CHECKED_BY_RECEIVING_FI', source: beneficiarySource },
];
export const BENEFICIARY_VERIFICATION_DEFAULT: BeneficiaryVerificationOutcome = { kind: 'status', status: 'MATCHED' };

export function beneficiaryVerificationFor(primaryIdentifier: string): BeneficiaryVerificationOutcome {
  return lookup(BENEFICIARY_VERIFICATION, BENEFICIARY_VERIFICATION_DEFAULT, scenarioSuffix(primaryIdentifier));
}

// ---------------------------------------------------------------------------------------
// Wallet ownership verification. Real signature checks run where the network's scheme is
// supported (Solana ed25519); this value passes on every network, as the hosted sandbox's
// legacy wallet-signature value does.

export const SANDBOX_VALID_SIGNATURE = 'sandbox-valid-signature';
