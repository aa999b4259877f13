import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { acceptMultipart, readMultipart } from '../../http/multipart.js';
import { op } from '../../http/route.js';
import { BulkCustomerCsvUpload, BulkCustomerImportJob, BulkCustomerImportJobAccepted, JobIdParams } from './schemas.js';
import * as service from './service.js';

const tag = 'Customers';

export const customerImportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // The CSV arrives as multipart/form-data; only this plugin's routes accept it. The operation
  // declares no client error, so any other body is accepted too and fails the job, which says why.
  await acceptMultipart(app);
  app.addContentTypeParser('*', (_request, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', (err) => done(err, undefined));
  });

  app.post('/customers/bulk/csv', {
    schema: op({
      operationId: 'uploadCustomersCsv', tag, summary: 'Create customers from a CSV file', permission: 'MANAGE',
      multipartBody: BulkCustomerCsvUpload, success: { 202: Type.Ref(BulkCustomerImportJobAccepted) }, errors: [401, 500],
    }),
  }, async (request, reply) => {
    const accepted = await service.uploadCustomersCsv(request.ctx, await readMultipart(request, { fileBytesMax: service.CSV_BYTES_MAX }));
    reply.code(202);
    return accepted;
  });

  app.get('/customers/bulk/jobs/:jobId', {
    schema: op({
      operationId: 'getBulkCustomerImportJob', tag, summary: 'Get a bulk customer import job', permission: 'VIEW',
      params: JobIdParams, success: { 200: Type.Ref(BulkCustomerImportJob) }, errors: [401, 404, 500],
    }),
  }, async (request) => service.getBulkCustomerImportJob(request.ctx, request.params.jobId));
};
