import type { Kysely } from 'kysely';

// Embedded-wallet authentication: the credentials that log into a wallet, the sessions a
// login opens (each holding the public half of the key the client signs with), the pending
// challenges of two-step signed requests, each platform's wallet organization (the key its
// OTP encryption targets are signed with), delegated card keys, and wallet privacy.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('wallet_orgs')
    .addColumn('platform_id', 'text', (c) => c.primaryKey().references('platforms.id'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    // Hex of the P-256 private scalar; the public key (uncompressed hex) is published as
    // `enclaveQuorumPublic` in every OTP encryption target bundle.
    .addColumn('signer_private_key', 'text', (c) => c.notNull())
    .addColumn('signer_public_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('wallet_credentials')
    // `AuthMethod:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('nickname', 'text', (c) => c.notNull())
    // PASSKEY: the WebAuthn credential id, its stored public key and counter (JSON), and the
    // registration challenge (single use per platform).
    .addColumn('credential_id', 'text')
    .addColumn('passkey', 'text')
    .addColumn('registration_challenge', 'text')
    // OAUTH: the identity (iss, aud, sub) as JSON.
    .addColumn('oidc_identity', 'text')
    // EMAIL_OTP / SMS_OTP: the private key of the current OTP encryption target (one per
    // issued code, cleared once used) and when that code stops being accepted.
    .addColumn('otp_target_key', 'text')
    .addColumn('otp_expires_at', 'text')
    .addColumn('otp_failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('wallet_credentials_account')
    .on('wallet_credentials')
    .columns(['platform_id', 'account_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('wallet_credentials_registration')
    .on('wallet_credentials')
    .columns(['platform_id', 'registration_challenge'])
    .unique()
    .execute();

  await db.schema
    .createTable('wallet_sessions')
    // `Session:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('credential_id', 'text', (c) => c.notNull())
    // Compressed hex of the session's P-256 public key: the key signed requests verify against.
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('wallet_sessions_account')
    .on('wallet_sessions')
    .columns(['platform_id', 'account_id', 'expires_at'])
    .execute();

  await db.schema
    .createTable('wallet_requests')
    // `Request:<uuid>`: the pending first leg of a signed request.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    // The resource the request acts on (a credential, session, account or quote id).
    .addColumn('target', 'text', (c) => c.notNull())
    // sha256 hex of the request body the challenge was issued for.
    .addColumn('body_hash', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    // Who may sign: JSON {kind: 'session', excludeCredentialId?, sessionId?} or {kind: 'key', publicKey}.
    .addColumn('signer', 'text', (c) => c.notNull())
    // JSON: what the second leg needs from the first.
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('delegated_keys')
    // `DelegatedKey:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('card_id', 'text', (c) => c.notNull())
    .addColumn('funding_source_id', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('nickname', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('delegated_keys_account')
    .on('delegated_keys')
    .columns(['platform_id', 'account_id'])
    .execute();

  await db.schema
    .alterTable('internal_accounts')
    .addColumn('private_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
