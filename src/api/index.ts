/**
 * `chat-webhooks/api`: calling the platform back. Typed chat and management clients, and validators and
 * builders for what an app sends (messages, forms, webhook configurations, apps). Re-exports only.
 */
export { createChatClient, apiMessageSchema, apiUserSchema, messageListSchema, userListSchema } from './chat-client.js';
export type {
  ApiMessage,
  ChatClient,
  ChatClientOptions,
  MessageList,
  MessageListQuery,
  UserList,
  UserListQuery,
  UserWalkOptions,
} from './chat-client.js';
export type { User } from '../events/records.js';
export { createManagementClient } from './management-client.js';
export type { ManagementClient, ManagementClientOptions } from './management-client.js';
export { ApiError, ValidationError } from './errors.js';
export type { ApiErrorCode, ApiErrorDetails } from './errors.js';
export type { ApiLogger, ClientOptions, Query, QueryValue, RequestOptions } from './transport.js';
export type { ApiRetryOptions, RetryOptions } from './retry.js';
export { API_VERSION, DEFAULT_DOMAIN, regions } from './base-url.js';
export type { Region, RegionInput } from './base-url.js';
export {
  MESSAGE_DATA_MAX_BYTES,
  MESSAGE_TAGS_MAX,
  MESSAGE_TAG_MAX_CHARACTERS,
  attachmentSchema,
  messageDataSchema,
  messageDataSize,
  messageTagSchema,
  messageTagsSchema,
} from './message.js';
export type { MessageData, MessageTags } from './message.js';
export {
  apiActionSchema,
  buttonActionSchema,
  buttonFieldSchema,
  checkboxFieldSchema,
  customActionSchema,
  dateTimeFieldSchema,
  deepLinkActionSchema,
  dropdownFieldSchema,
  formElementTypes,
  formFieldSchema,
  formFieldsSchema,
  formOptionSchema,
  isIanaTimeZone,
  isKnownFormField,
  knownFormFieldSchema,
  labelFieldSchema,
  radioFieldSchema,
  singleSelectFieldSchema,
  textInputFieldSchema,
  unknownFormFieldSchema,
  urlNavigationActionSchema,
} from './form.js';
export type {
  ApiAction,
  ButtonAction,
  ButtonField,
  CheckboxField,
  CustomAction,
  DateTimeField,
  DeepLinkAction,
  DropdownField,
  FormField,
  FormFieldInput,
  FormOption,
  KnownFormElementType,
  KnownFormField,
  LabelField,
  RadioField,
  SingleSelectField,
  TextInputField,
  UnknownFormField,
  UrlNavigationAction,
} from './form.js';
export { form } from './form-builders.js';
export { webhookConfigSchema, authFromWebhookConfig } from './webhook-config.js';
export type { WebhookAuthConfig, WebhookConfig } from './webhook-config.js';
export { appCreateSchema } from './app-create.js';
export type { AppCreateBody, AppCreateInput } from './app-create.js';
