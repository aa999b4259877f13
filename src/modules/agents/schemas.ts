import { Type } from '@sinclair/typebox';
import {
  DateTime,
  PageOf,
  PageQuery,
  CreatedUpdatedQuery,
  StringEnum,
  component,
  NOT_EMPTY,
  strictly,
} from '../../http/schemas.js';
import { Quote } from '../quotes/schemas.js';
import { TransactionOneOf } from '../transactions/schemas.js';

export const AGENT_PERMISSIONS = [
  'VIEW_TRANSACTIONS',
  'CREATE_TRANSFERS',
  'CREATE_QUOTES',
  'EXECUTE_QUOTES',
  'MANAGE_EXTERNAL_ACCOUNTS',
] as const;
export type AgentPermission = (typeof AGENT_PERMISSIONS)[number];
export const AGENT_EXECUTION_MODES = ['AUTO', 'APPROVAL_REQUIRED'] as const;

const Amount = Type.Integer({ minimum: 0 });
const NullableAmount = Type.Union([Amount, Type.Null()]);

export const AgentPermissionSchema = component('AgentPermission', StringEnum(AGENT_PERMISSIONS));
export const AgentExecutionMode = component('AgentExecutionMode', StringEnum(AGENT_EXECUTION_MODES));

export const AgentSpendingLimits = component(
  'AgentSpendingLimits',
  Type.Object({
    currency: Type.String({ minLength: 1 }),
    perTransactionLimit: Amount,
    dailyLimit: Type.Optional(NullableAmount),
    dailyTransactionLimit: Type.Optional(Amount),
    monthlyLimit: Type.Optional(NullableAmount),
  }),
);

export const AgentAccountRule = component(
  'AgentAccountRule',
  Type.Object({
    accountId: Type.String({ minLength: 1 }),
    executionMode: Type.Optional(Type.Ref(AgentExecutionMode)),
    perTransactionLimit: Type.Optional(NullableAmount),
  }),
);

export const AgentAccountRestrictions = component(
  'AgentAccountRestrictions',
  Type.Object({
    allowedAccountIds: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 1 })), Type.Null()])),
    accountRules: Type.Optional(Type.Array(Type.Ref(AgentAccountRule))),
  }),
);

export const AgentApprovalThresholds = component(
  'AgentApprovalThresholds',
  Type.Object({
    currency: Type.Optional(Type.String({ minLength: 1 })),
    amount: Type.Optional(NullableAmount),
  }),
);

export const AgentPolicy = component(
  'AgentPolicy',
  Type.Object({
    permissions: Type.Array(Type.Ref(AgentPermissionSchema)),
    defaultExecutionMode: Type.Ref(AgentExecutionMode),
    spendingLimits: Type.Ref(AgentSpendingLimits),
    accountRestrictions: Type.Optional(Type.Ref(AgentAccountRestrictions)),
    approvalThresholds: Type.Optional(Type.Ref(AgentApprovalThresholds)),
  }),
);

export interface PolicyInput {
  permissions: AgentPermission[];
  defaultExecutionMode: 'AUTO' | 'APPROVAL_REQUIRED';
  spendingLimits: {
    currency: string;
    perTransactionLimit: number;
    dailyLimit?: number | null;
    dailyTransactionLimit?: number;
    monthlyLimit?: number | null;
  };
  accountRestrictions?: {
    allowedAccountIds?: string[] | null;
    accountRules?: {
      accountId: string;
      executionMode?: 'AUTO' | 'APPROVAL_REQUIRED';
      perTransactionLimit?: number | null;
    }[];
  };
  approvalThresholds?: { currency?: string; amount?: number | null };
}

export const AgentUsage = component(
  'AgentUsage',
  Type.Object({
    dailyTransactionCount: Type.Integer(),
    dailySpend: Type.Integer(),
    dailyResetDate: Type.Optional(Type.String()),
    monthlySpend: Type.Integer(),
    monthlyResetMonth: Type.Optional(Type.String()),
  }),
);

export const Agent = component(
  'Agent',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    customerId: Type.String(),
    isPaused: Type.Boolean(),
    isConnected: Type.Boolean(),
    policy: Type.Ref(AgentPolicy),
    usage: Type.Ref(AgentUsage),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const AgentListResponse = PageOf('AgentListResponse', Type.Ref(Agent));

export const AgentCreateRequest = component(
  'AgentCreateRequest',
  Type.Object({
    name: strictly(Type.String({ maxLength: 255 }), NOT_EMPTY),
    customerId: Type.String({ minLength: 1 }),
    policy: Type.Ref(AgentPolicy),
  }),
);

export const AgentDeviceCode = component(
  'AgentDeviceCode',
  Type.Object({ code: Type.String(), agentId: Type.String(), expiresAt: DateTime, redeemed: Type.Boolean() }),
);

export const AgentCreateResponse = component(
  'AgentCreateResponse',
  Type.Object({ agent: Type.Ref(Agent), deviceCode: Type.Ref(AgentDeviceCode) }),
);

export const AgentUpdateRequest = component(
  'AgentUpdateRequest',
  Type.Object({
    name: Type.Optional(strictly(Type.String({ maxLength: 255 }), NOT_EMPTY)),
    isPaused: Type.Optional(Type.Boolean()),
  }),
);

export const AgentSpendingLimitsUpdate = component(
  'AgentSpendingLimitsUpdate',
  Type.Object({
    currency: Type.Optional(Type.String({ minLength: 1 })),
    perTransactionLimit: Type.Optional(Amount),
    dailyLimit: Type.Optional(NullableAmount),
    dailyTransactionLimit: Type.Optional(Amount),
    monthlyLimit: Type.Optional(NullableAmount),
  }),
);

export const AgentPolicyUpdateRequest = component(
  'AgentPolicyUpdateRequest',
  Type.Object({
    permissions: Type.Optional(Type.Array(Type.Ref(AgentPermissionSchema))),
    defaultExecutionMode: Type.Optional(Type.Ref(AgentExecutionMode)),
    spendingLimits: Type.Optional(Type.Ref(AgentSpendingLimitsUpdate)),
    accountRestrictions: Type.Optional(Type.Ref(AgentAccountRestrictions)),
    approvalThresholds: Type.Optional(Type.Ref(AgentApprovalThresholds)),
  }),
);

export type PolicyPatch = Partial<Omit<PolicyInput, 'spendingLimits'>> & {
  spendingLimits?: Partial<PolicyInput['spendingLimits']>;
};

export const AgentDeviceCodeStatusResponse = component(
  'AgentDeviceCodeStatusResponse',
  Type.Object({ code: Type.String(), redeemed: Type.Boolean() }),
);

export const AgentDeviceCodeRedeemResponse = component(
  'AgentDeviceCodeRedeemResponse',
  Type.Object({
    agentId: Type.String(),
    agentName: Type.String(),
    accessToken: Type.String(),
    policy: Type.Ref(AgentPolicy),
  }),
);

export const AgentListQuery = Type.Object({
  customerId: Type.Optional(Type.String()),
  isPaused: Type.Optional(Type.Boolean()),
  isConnected: Type.Optional(Type.Boolean()),
  ...CreatedUpdatedQuery,
  ...PageQuery,
});

export const AgentIdParams = Type.Object({ agentId: Type.String() });
export const DeviceCodeParams = Type.Object({ code: Type.String() });

// ------------------------------------------------------------------------------- actions

export const AGENT_ACTION_STATUSES = ['PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'FAILED'] as const;
export type AgentActionStatusValue = (typeof AGENT_ACTION_STATUSES)[number];
export const AGENT_ACTION_TYPES = ['EXECUTE_QUOTE', 'TRANSFER_OUT', 'TRANSFER_IN'] as const;
export type AgentActionTypeValue = (typeof AGENT_ACTION_TYPES)[number];

export const AgentActionStatus = component('AgentActionStatus', StringEnum(AGENT_ACTION_STATUSES));
export const AgentActionType = component('AgentActionType', StringEnum(AGENT_ACTION_TYPES));

export const AgentTransferDetails = component(
  'AgentTransferDetails',
  Type.Object({
    amount: Type.Integer(),
    currency: Type.String(),
    sourceAccountId: Type.String(),
    destinationAccountId: Type.String(),
  }),
);

export const AgentAction = component(
  'AgentAction',
  Type.Object({
    id: Type.String(),
    agentId: Type.String(),
    customerId: Type.String(),
    platformCustomerId: Type.String(),
    status: Type.Ref(AgentActionStatus),
    type: Type.Ref(AgentActionType),
    quote: Type.Optional(Type.Ref(Quote)),
    transferDetails: Type.Optional(Type.Ref(AgentTransferDetails)),
    transaction: Type.Optional(Type.Ref(TransactionOneOf)),
    rejectionReason: Type.Optional(Type.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const AgentActionListResponse = PageOf('AgentActionListResponse', Type.Ref(AgentAction));

export const AgentActionRejectRequest = component(
  'AgentActionRejectRequest',
  Type.Object({ reason: Type.Optional(Type.String({ maxLength: 1000 })) }),
);

export const AgentApprovalsQuery = Type.Object({
  agentId: Type.Optional(Type.String()),
  customerId: Type.Optional(Type.String()),
  startDate: Type.Optional(DateTime),
  endDate: Type.Optional(DateTime),
  ...PageQuery,
  sortOrder: Type.Optional(StringEnum(['asc', 'desc'], { default: 'desc' })),
});

export const AgentActionsQuery = Type.Object({
  // Inline rather than a $ref: this query is read leniently (no 400 declared), value by value.
  status: Type.Optional(StringEnum(AGENT_ACTION_STATUSES)),
  ...PageQuery,
});

export const AgentActionParams = Type.Object({ agentId: Type.String(), actionId: Type.String() });
export const ActionIdParams = Type.Object({ actionId: Type.String() });
