import type { Kysely } from 'kysely';

// Strong Customer Authentication: the factors a customer enrolled, the challenges issued
// for enrollment, login and beneficiary trust, the login-security state (failed attempts,
// lockout), SCA sessions, 2FA resets and trusted beneficiaries.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sca_factors')
    // `ScaFactor:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_id', 'text', (c) => c.notNull())
    // TOTP or PASSKEY (SMS_OTP is implicit: the customer's verified phone).
    .addColumn('factor', 'text', (c) => c.notNull())
    // PASSKEY: the WebAuthn credential id, the customer-facing handle of the factor.
    .addColumn('credential_id', 'text')
    .addColumn('name', 'text')
    // TOTP: the shared secret, hex, and the last time step a code was accepted for (never again).
    .addColumn('secret', 'text')
    .addColumn('last_totp_step', 'bigint')
    // PASSKEY: the verified public key and its counter (JSON).
    .addColumn('passkey', 'text')
    // TOTP: sha256 hex of each recovery code (JSON array).
    .addColumn('recovery_codes', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sca_factors_customer')
    .on('sca_factors')
    .columns(['platform_id', 'customer_id', 'factor'])
    .execute();

  await db.schema
    .createTable('sca_challenges')
    // `ScaChallenge:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_id', 'text', (c) => c.notNull())
    // ENROLL, LOGIN, TRUST or UNTRUST.
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('factor', 'text', (c) => c.notNull())
    // What the challenge is bound to: the TOTP secret being enrolled, the external account being (un)trusted.
    .addColumn('subject', 'text')
    // The WebAuthn challenge a passkey ceremony must sign.
    .addColumn('challenge', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sca_challenges_customer')
    .on('sca_challenges')
    .columns(['platform_id', 'customer_id', 'purpose', 'created_at'])
    .execute();

  await db.schema
    .createTable('sca_login_states')
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_until', 'text')
    .addColumn('suspended', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('sca_login_states_pk', ['platform_id', 'customer_id'])
    .execute();

  await db.schema
    .createTable('sca_sessions')
    // `ScaSession:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('factor', 'text', (c) => c.notNull())
    .addColumn('end_user_ip_address', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sca_sessions_customer')
    .on('sca_sessions')
    .columns(['platform_id', 'customer_id', 'expires_at'])
    .execute();

  await db.schema
    .createTable('sca_resets')
    // `TwoFactorReset:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('factor', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // sha256 hex of the liveness page's access token.
    .addColumn('liveness_token_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sca_resets_customer')
    .on('sca_resets')
    .columns(['platform_id', 'customer_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('sca_trusted_beneficiaries')
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('external_account_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('trusted_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('sca_trusted_beneficiaries_pk', ['platform_id', 'external_account_id'])
    .execute();
}
