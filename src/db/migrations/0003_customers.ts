import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Customers and onboarding: customers, beneficial owners, documents (with their files),
// verifications, hosted KYC links, the idempotency keys of createCustomerKycLink, and bulk
// customer import jobs.

export async function up(db: Kysely<unknown>): Promise<void> {
  // Uploaded files live in the database so they share its durability and backups.
  const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';

  await db.schema
    .createTable('customers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_type', 'text', (c) => c.notNull())
    .addColumn('platform_customer_id', 'text', (c) => c.notNull())
    .addColumn('uma_address', 'text', (c) => c.notNull())
    .addColumn('region', 'text')
    .addColumn('currencies', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('phone_number', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('profile', 'text', (c) => c.notNull())
    .addColumn('end_user_terms', 'text')
    .addColumn('contact_verification', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  // Active customers only: a deleted customer's identifiers may be used again.
  await db.schema
    .createIndex('customers_platform_customer_id')
    .on('customers')
    .columns(['platform_id', 'platform_customer_id'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('customers_uma_address')
    .on('customers')
    .columns(['platform_id', 'uma_address'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('customers_platform_created')
    .on('customers')
    .columns(['platform_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('beneficial_owners')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id'))
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('ownership_percentage', 'integer', (c) => c.notNull())
    .addColumn('personal_info', 'text', (c) => c.notNull())
    .addColumn('kyc_status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('beneficial_owners_customer_created')
    .on('beneficial_owners')
    .columns(['platform_id', 'customer_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('holder_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('document_type', 'text', (c) => c.notNull())
    .addColumn('side', 'text')
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('document_number', 'text')
    .addColumn('issuing_authority', 'text')
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('content', bytes, (c) => c.notNull())
    .addColumn('quality_issue', 'text')
    .addColumn('submitted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('documents_holder_created')
    .on('documents')
    .columns(['platform_id', 'holder_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('documents_platform_created')
    .on('documents')
    .columns(['platform_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('documents_customer').on('documents').columns(['platform_id', 'customer_id']).execute();

  await db.schema
    .createTable('verifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('errors', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('verifications_customer_created')
    .on('verifications')
    .columns(['platform_id', 'customer_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('verifications_platform_created')
    .on('verifications')
    .columns(['platform_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('kyc_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('customer_import_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('csv', 'text')
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('processed', 'integer', (c) => c.notNull())
    .addColumn('successful', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .execute();
  await db.schema
    .createTable('customer_import_errors')
    .addColumn('job_id', 'text', (c) => c.notNull().references('customer_import_jobs.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('entry', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('customer_import_errors_pk', ['job_id', 'position'])
    .execute();
}
