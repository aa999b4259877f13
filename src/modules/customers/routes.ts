import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { apiError } from '../../http/errors.js';
import { op } from '../../http/route.js';
import { attachedFieldErrors } from '../../http/validation.js';
import {
  ContactVerificationConfirmRequest,
  Customer,
  CustomerCreateRequest,
  CustomerIdParams,
  CustomerList,
  CustomerListQuery,
  CustomerOneOf,
  CustomerUpdateRequest,
  EndUserTerms,
  type CustomerInput,
} from './schemas.js';
import * as service from './service.js';
import { SignedRequestChallenge, SignedRetryHeaders } from '../wallet-auth/schemas.js';
import { signedHeaders } from '../wallet-auth/signing.js';

const tag = 'Customers';
const contactTag = 'Contact Verification';

export const customerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/customers',
    {
      schema: op({
        operationId: 'listCustomers',
        tag,
        summary: 'List customers',
        permission: 'VIEW',
        querystring: CustomerListQuery,
        success: { 200: Type.Ref(CustomerList) },
        errors: [400, 401, 405, 500],
      }),
    },
    async (request) => service.listCustomers(request.ctx, request.query),
  );

  // Body problems are collected, not thrown, so the service adds its own rules and answers
  // every invalid field in one 400.
  app.post(
    '/customers',
    {
      attachValidation: true,
      schema: op({
        operationId: 'createCustomer',
        tag,
        summary: 'Create a customer',
        permission: 'MANAGE',
        body: Type.Ref(CustomerCreateRequest),
        success: { 201: Type.Ref(CustomerOneOf) },
        errors: [400, 401, 405, 409, 500, 501],
      }),
    },
    async (request, reply) => {
      const customer = await service.createCustomer(
        request.ctx,
        request.body as CustomerInput,
        attachedFieldErrors(request.validationError),
      );
      reply.code(201);
      return customer;
    },
  );

  // The reference answers other methods on the collection with a JSON 405.
  app.route({
    method: ['PUT', 'PATCH', 'DELETE'],
    url: '/customers',
    handler: async (request, reply) => {
      reply.header('allow', 'GET, POST');
      throw apiError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on /customers; use GET or POST`);
    },
  });

  app.get(
    '/customers/end-user-terms',
    {
      schema: op({
        operationId: 'getEndUserTerms',
        tag,
        summary: 'The current End User Terms',
        permission: 'VIEW',
        success: { 200: Type.Ref(EndUserTerms) },
        errors: [401],
      }),
    },
    async (request) => service.getEndUserTerms(`${request.protocol}://${request.host}`),
  );

  app.get(
    '/customers/:customerId',
    {
      schema: op({
        operationId: 'getCustomerById',
        tag,
        summary: 'Get a customer',
        permission: 'VIEW',
        params: CustomerIdParams,
        success: { 200: Type.Ref(CustomerOneOf) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getCustomerById(request.ctx, request.params.customerId),
  );

  app.patch(
    '/customers/:customerId',
    {
      attachValidation: true,
      schema: op({
        operationId: 'updateCustomerById',
        tag,
        summary: 'Update a customer',
        permission: 'MANAGE',
        params: CustomerIdParams,
        headers: SignedRetryHeaders,
        body: Type.Ref(CustomerUpdateRequest),
        success: { 200: Type.Ref(CustomerOneOf), 202: Type.Ref(SignedRequestChallenge) },
        errors: [400, 401, 404, 409, 424, 500],
      }),
    },
    async (request, reply) => {
      const result = await service.updateCustomerById(
        request.ctx,
        request.params.customerId,
        request.body as CustomerInput,
        attachedFieldErrors(request.validationError),
        signedHeaders(request.headers),
      );
      reply.code(result.status);
      return result.body;
    },
  );

  app.delete(
    '/customers/:customerId',
    {
      schema: op({
        operationId: 'deleteCustomerById',
        tag,
        summary: 'Delete a customer',
        permission: 'MANAGE',
        params: CustomerIdParams,
        success: { 200: Type.Ref(CustomerOneOf) },
        errors: [401, 404, 410, 500],
      }),
    },
    async (request) => service.deleteCustomerById(request.ctx, request.params.customerId),
  );

  for (const channel of ['email', 'phone'] as const) {
    const Name = channel === 'email' ? 'Email' : 'Phone';
    app.post(
      `/customers/:customerId/verify-${channel}`,
      {
        schema: op({
          operationId: `sendCustomer${Name}Verification`,
          tag: contactTag,
          summary: `Send a code to the customer's ${channel}`,
          permission: 'MANAGE',
          params: CustomerIdParams,
          success: { 204: null },
          errors: [401, 404, 409, 500],
        }),
      },
      async (request, reply) => {
        await service.sendContactVerification(request.ctx, request.params.customerId, channel);
        reply.code(204);
      },
    );

    app.post(
      `/customers/:customerId/verify-${channel}/confirm`,
      {
        schema: op({
          operationId: `confirmCustomer${Name}Verification`,
          tag: contactTag,
          summary: `Confirm the customer's ${channel} with its code`,
          permission: 'MANAGE',
          params: CustomerIdParams,
          body: Type.Ref(ContactVerificationConfirmRequest),
          success: { 200: Type.Ref(Customer) },
          errors: [400, 401, 404, 409, 500],
        }),
      },
      async (request) =>
        service.confirmContactVerification(request.ctx, request.params.customerId, channel, request.body.code),
    );
  }
};
