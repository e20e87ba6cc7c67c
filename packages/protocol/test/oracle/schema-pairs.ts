import * as sdk from '@modelcontextprotocol/sdk/types.js';
import * as ours from '../../src/index.js';

/** Anything that can give a verdict on a value: our zod schemas and the SDK's alike. */
export interface Judge {
  safeParse(value: unknown): { success: boolean };
}

/** Each of our schemas beside the official SDK schema that must reach the same verdicts. */
export const SCHEMA_PAIRS = {
  JsonRpcMessage: { ours: ours.JsonRpcMessageSchema, sdk: sdk.JSONRPCMessageSchema },
  JsonRpcRequest: { ours: ours.JsonRpcRequestSchema, sdk: sdk.JSONRPCRequestSchema },
  JsonRpcNotification: { ours: ours.JsonRpcNotificationSchema, sdk: sdk.JSONRPCNotificationSchema },
  JsonRpcResultResponse: { ours: ours.JsonRpcResultResponseSchema, sdk: sdk.JSONRPCResultResponseSchema },
  JsonRpcErrorResponse: { ours: ours.JsonRpcErrorResponseSchema, sdk: sdk.JSONRPCErrorResponseSchema },
  JsonRpcResponse: { ours: ours.JsonRpcResponseSchema, sdk: sdk.JSONRPCResponseSchema },
  EmptyResult: { ours: ours.EmptyResultSchema, sdk: sdk.EmptyResultSchema },
  Implementation: { ours: ours.ImplementationSchema, sdk: sdk.ImplementationSchema },
  ClientCapabilities: { ours: ours.ClientCapabilitiesSchema, sdk: sdk.ClientCapabilitiesSchema },
  ServerCapabilities: { ours: ours.ServerCapabilitiesSchema, sdk: sdk.ServerCapabilitiesSchema },
  InitializeRequest: { ours: ours.InitializeRequestSchema, sdk: sdk.InitializeRequestSchema },
  InitializeResult: { ours: ours.InitializeResultSchema, sdk: sdk.InitializeResultSchema },
  InitializedNotification: { ours: ours.InitializedNotificationSchema, sdk: sdk.InitializedNotificationSchema },
  PingRequest: { ours: ours.PingRequestSchema, sdk: sdk.PingRequestSchema },
  SetLevelRequest: { ours: ours.SetLevelRequestSchema, sdk: sdk.SetLevelRequestSchema },
  LoggingMessageNotification: {
    ours: ours.LoggingMessageNotificationSchema,
    sdk: sdk.LoggingMessageNotificationSchema,
  },
  ListToolsRequest: { ours: ours.ListToolsRequestSchema, sdk: sdk.ListToolsRequestSchema },
  ListToolsResult: { ours: ours.ListToolsResultSchema, sdk: sdk.ListToolsResultSchema },
  Tool: { ours: ours.ToolSchema, sdk: sdk.ToolSchema },
  CallToolRequest: { ours: ours.CallToolRequestSchema, sdk: sdk.CallToolRequestSchema },
  CallToolResult: { ours: ours.CallToolResultSchema, sdk: sdk.CallToolResultSchema },
  ContentBlock: { ours: ours.ContentBlockSchema, sdk: sdk.ContentBlockSchema },
  Task: { ours: ours.TaskSchema, sdk: sdk.TaskSchema },
  TaskMetadata: { ours: ours.TaskMetadataSchema, sdk: sdk.TaskMetadataSchema },
  RelatedTaskMetadata: { ours: ours.RelatedTaskMetadataSchema, sdk: sdk.RelatedTaskMetadataSchema },
  CreateTaskResult: { ours: ours.CreateTaskResultSchema, sdk: sdk.CreateTaskResultSchema },
  GetTaskRequest: { ours: ours.GetTaskRequestSchema, sdk: sdk.GetTaskRequestSchema },
  GetTaskResult: { ours: ours.GetTaskResultSchema, sdk: sdk.GetTaskResultSchema },
  GetTaskPayloadRequest: { ours: ours.GetTaskPayloadRequestSchema, sdk: sdk.GetTaskPayloadRequestSchema },
  GetTaskPayloadResult: { ours: ours.GetTaskPayloadResultSchema, sdk: sdk.GetTaskPayloadResultSchema },
  ListTasksRequest: { ours: ours.ListTasksRequestSchema, sdk: sdk.ListTasksRequestSchema },
  ListTasksResult: { ours: ours.ListTasksResultSchema, sdk: sdk.ListTasksResultSchema },
  CancelTaskRequest: { ours: ours.CancelTaskRequestSchema, sdk: sdk.CancelTaskRequestSchema },
  CancelTaskResult: { ours: ours.CancelTaskResultSchema, sdk: sdk.CancelTaskResultSchema },
  TaskStatusNotification: { ours: ours.TaskStatusNotificationSchema, sdk: sdk.TaskStatusNotificationSchema },
  ProgressNotification: { ours: ours.ProgressNotificationSchema, sdk: sdk.ProgressNotificationSchema },
  CancelledNotification: { ours: ours.CancelledNotificationSchema, sdk: sdk.CancelledNotificationSchema },
  ElicitRequest: { ours: ours.ElicitRequestSchema, sdk: sdk.ElicitRequestSchema },
  ElicitResult: { ours: ours.ElicitResultSchema, sdk: sdk.ElicitResultSchema },
  ElicitationCompleteNotification: {
    ours: ours.ElicitationCompleteNotificationSchema,
    sdk: sdk.ElicitationCompleteNotificationSchema,
  },
  CreateMessageRequest: { ours: ours.CreateMessageRequestSchema, sdk: sdk.CreateMessageRequestSchema },
  CreateMessageResult: { ours: ours.CreateMessageResultSchema, sdk: sdk.CreateMessageResultSchema },
  CreateMessageResultWithTools: {
    ours: ours.CreateMessageResultWithToolsSchema,
    sdk: sdk.CreateMessageResultWithToolsSchema,
  },
  Resource: { ours: ours.ResourceSchema, sdk: sdk.ResourceSchema },
  ResourceTemplate: { ours: ours.ResourceTemplateSchema, sdk: sdk.ResourceTemplateSchema },
  ListResourcesRequest: { ours: ours.ListResourcesRequestSchema, sdk: sdk.ListResourcesRequestSchema },
  ListResourcesResult: { ours: ours.ListResourcesResultSchema, sdk: sdk.ListResourcesResultSchema },
  ListResourceTemplatesRequest: {
    ours: ours.ListResourceTemplatesRequestSchema,
    sdk: sdk.ListResourceTemplatesRequestSchema,
  },
  ListResourceTemplatesResult: {
    ours: ours.ListResourceTemplatesResultSchema,
    sdk: sdk.ListResourceTemplatesResultSchema,
  },
  ReadResourceRequest: { ours: ours.ReadResourceRequestSchema, sdk: sdk.ReadResourceRequestSchema },
  ReadResourceResult: { ours: ours.ReadResourceResultSchema, sdk: sdk.ReadResourceResultSchema },
  SubscribeRequest: { ours: ours.SubscribeRequestSchema, sdk: sdk.SubscribeRequestSchema },
  UnsubscribeRequest: { ours: ours.UnsubscribeRequestSchema, sdk: sdk.UnsubscribeRequestSchema },
  ResourceUpdatedNotification: {
    ours: ours.ResourceUpdatedNotificationSchema,
    sdk: sdk.ResourceUpdatedNotificationSchema,
  },
  ResourceListChangedNotification: {
    ours: ours.ResourceListChangedNotificationSchema,
    sdk: sdk.ResourceListChangedNotificationSchema,
  },
  Prompt: { ours: ours.PromptSchema, sdk: sdk.PromptSchema },
  ListPromptsRequest: { ours: ours.ListPromptsRequestSchema, sdk: sdk.ListPromptsRequestSchema },
  ListPromptsResult: { ours: ours.ListPromptsResultSchema, sdk: sdk.ListPromptsResultSchema },
  GetPromptRequest: { ours: ours.GetPromptRequestSchema, sdk: sdk.GetPromptRequestSchema },
  GetPromptResult: { ours: ours.GetPromptResultSchema, sdk: sdk.GetPromptResultSchema },
  PromptListChangedNotification: {
    ours: ours.PromptListChangedNotificationSchema,
    sdk: sdk.PromptListChangedNotificationSchema,
  },
  CompleteRequest: { ours: ours.CompleteRequestSchema, sdk: sdk.CompleteRequestSchema },
  CompleteResult: { ours: ours.CompleteResultSchema, sdk: sdk.CompleteResultSchema },
} satisfies Record<string, { ours: Judge; sdk: Judge }>;

/** The name of a schema pair. */
export type SchemaName = keyof typeof SCHEMA_PAIRS;

/**
 * How a corpus value is judged: `bare` hands it to the schema as is; `request` and `notification` also
 * check the JSON-RPC envelope (method schemas judge the whole message, as in the SDK); `result` checks the
 * response envelope and hands its `result` to the schema.
 */
export type Frame = 'bare' | 'request' | 'notification' | 'result';

/** The verdict one side (`ours` or `sdk`) reaches on `value`. */
export function verdict(side: 'ours' | 'sdk', schema: SchemaName, frame: Frame, value: unknown): boolean {
  const judge: Judge = SCHEMA_PAIRS[schema][side];
  switch (frame) {
    case 'bare':
      return judge.safeParse(value).success;
    case 'request':
      return SCHEMA_PAIRS.JsonRpcRequest[side].safeParse(value).success && judge.safeParse(value).success;
    case 'notification':
      return SCHEMA_PAIRS.JsonRpcNotification[side].safeParse(value).success && judge.safeParse(value).success;
    case 'result': {
      if (!SCHEMA_PAIRS.JsonRpcResultResponse[side].safeParse(value).success) return false;
      return judge.safeParse((value as { result: unknown }).result).success;
    }
  }
}
