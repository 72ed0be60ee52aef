/**
 * Schemas of the records carried inside webhook payloads (spec sections 2 and 6.3).
 *
 * Tolerance rules (docs/design.md, "Principles"):
 * - identifiers and what a handler cannot do without are required; every other field is optional but
 *   type-checked when present, because nested records often arrive trimmed;
 * - "values that occur" are open sets: typed as the known literals plus any string;
 * - unknown fields are never a reason to reject. Schemas are plain `z.object`s, which ignore unknown keys;
 *   parsing hands back the caller's own object (see validate.ts), so every unknown field is kept at run time
 *   while the types stay precise enough to catch a typo.
 * - call and meeting payloads carry booleans and numbers inside strings ("true", "21.433000"): they stay
 *   strings, and a real number or boolean is tolerated too.
 */
import { z } from 'zod';

/** A string field whose documented values are an open set: the known ones autocomplete, any string passes. */
export function openSet<const V extends string>(..._known: V[]): z.ZodType<V | (string & {})> {
  return z.string();
}

export const id = z.string();
/** Epoch timestamp (seconds unless a field says milliseconds). */
export const timestamp = z.number();
/** Call and meeting payloads write numbers as strings ("21.433000"); accept both forms, convert neither. */
export const numberLike = z.union([z.string(), z.number()]);
/** Call and meeting payloads write booleans as strings ("true"); accept both forms, convert neither. */
export const booleanLike = z.union([z.string(), z.boolean()]);
const json = z.record(z.string(), z.unknown());

export const user = z.object({
  uid: id,
  name: z.string().optional(),
  avatar: z.string().optional(),
  status: openSet('available', 'online', 'offline').optional(),
  role: openSet('default').optional(),
  lastActiveAt: timestamp.optional(),
  createdAt: timestamp.optional(),
  conversationId: id.optional(),
  scope: openSet('admin', 'participant', 'moderator').optional(),
  oldScope: openSet('admin', 'participant', 'moderator').optional(),
  hasBlockedMe: z.boolean().optional(),
  blockedByMe: z.boolean().optional(),
  deactivatedAt: timestamp.optional(),
});

export const group = z.object({
  guid: id,
  name: z.string().optional(),
  type: openSet('public', 'private', 'password').optional(),
  scope: openSet('admin', 'participant', 'moderator').optional(),
  membersCount: z.number().optional(),
  onlineMembersCount: z.number().optional(),
  joinedAt: timestamp.optional(),
  hasJoined: z.boolean().optional(),
  conversationId: id.optional(),
  createdAt: timestamp.optional(),
  updatedAt: timestamp.optional(),
  updatedBy: id.optional(),
  owner: id.optional(),
  oldOwner: id.optional(),
});

/** Users keyed by uid (`members`, `users`, `mentions`). */
export const usersByUid = z.record(z.string(), user);

const userEntity = z.object({ entity: user, entityType: openSet('user') });
/** The receiver of a message is a user or, for a group message, a group. */
const receiverEntity = z.object({ entity: z.union([user, group]), entityType: openSet('user', 'group') });

/** `data` of a message: free-form content, with a few names that have a defined meaning. */
const messageContent = z.looseObject({
  text: z.string().optional(),
  attachments: z.array(json).optional(),
  // The spec names custom_data without giving it a shape.
  custom_data: z.unknown().optional(),
  metadata: json.optional(),
  entities: z.object({ sender: userEntity, receiver: receiverEntity }).partial().optional(),
  mentions: usersByUid.optional(),
});

const messageFields = {
  id,
  conversationId: id.optional(),
  sender: id,
  receiverType: openSet('user', 'group'),
  receiver: id,
  sentAt: timestamp.optional(),
  updatedAt: timestamp.optional(),
  editedAt: timestamp.optional(),
  editedBy: id.optional(),
  deliveredAt: timestamp.optional(),
  readAt: timestamp.optional(),
  deletedAt: timestamp.optional(),
  deletedBy: id.optional(),
  tags: z.array(z.string()).optional(),
};

/** A message record (spec 2.2) of category `message` or any other non-action category. */
export const message = z.object({
  ...messageFields,
  category: openSet('message', 'action', 'call', 'custom', 'interactive'),
  type: openSet('text', 'image', 'video', 'audio', 'file'),
  data: messageContent,
});

/** A message as the less documented triggers carry it: only its id is certain. */
export const messageSummary = message.partial().required({ id: true });

/** A message whose `data.mentions` names the mentioned users (`user_mentioned`). */
export const mentionMessage = message.extend({
  data: messageContent.extend({ mentions: usersByUid }),
});

/** The call entity inside `on` of a call action (spec 2.2). */
export const callEntity = z.object({
  sessionid: id,
  conversationId: id.optional(),
  sender: id.optional(),
  receiverType: openSet('user', 'group').optional(),
  receiver: id.optional(),
  status: openSet('initiated', 'ongoing', 'ended', 'busy', 'cancelled', 'rejected', 'unanswered').optional(),
  type: openSet('audio', 'video').optional(),
  data: z.object({ entities: z.object({ sender: userEntity, receiver: receiverEntity }).partial() }).partial().optional(),
  initiatedAt: timestamp.optional(),
  joinedAt: timestamp.optional(),
});

/**
 * An action message (category `action`, or `call` for call actions): `data.action` says what happened,
 * `data.entities.on` holds what it happened to.
 */
function actionMessage<A extends z.ZodType, On extends z.ZodType>(action: A, on: On, entityType: z.ZodType) {
  return z.object({
    ...messageFields,
    category: openSet('action', 'call'),
    type: openSet('message', 'audio', 'video'),
    data: z.looseObject({
      action,
      resource: z.string().optional(),
      entities: z.object({
        by: userEntity.optional(),
        for: receiverEntity.optional(),
        on: z.object({ entity: on, entityType }),
      }),
    }),
  });
}

/** The documented `message_edited` / `message_deleted` shape: an action wrapping the affected message. */
export const messageAction = <A extends string>(action: A) =>
  actionMessage(openSet(action), message, openSet('message'));

/** `data.call` of call events: a call-category action message whose `on` entity is the call. */
export const callAction = <A extends string>(action: A) => actionMessage(openSet(action), callEntity, openSet('call'));

/**
 * `data.call` of the call outcomes observed beyond the spec (busy, rejected, …): shaped like `callAction`, but
 * little of it is documented, so only `data.action` is required and everything else is checked when present.
 */
export const observedCallAction = <A extends string>(action: A) => {
  const documented = callAction(action);
  const content = documented.shape.data;
  return documented.partial().extend({
    data: content.extend({ entities: content.shape.entities.partial().optional() }),
  });
};

export const reaction = z.object({
  id: id.optional(),
  messageId: id,
  reaction: z.string(),
  uid: id,
  reactedAt: timestamp.optional(),
  reactedBy: user.optional(),
});

/** `data` of delivery and read receipts, one user's or a whole group's (`…_to_all`, `…_by_all`). */
export const receipt = <A extends string>(...actions: A[]) =>
  z.object({
    receiver: id,
    receiverType: openSet('user', 'group'),
    type: openSet('receipts').optional(),
    sender: id.optional(),
    messageSender: id.optional(),
    body: z.object({
      action: openSet(...actions),
      messageId: id,
      user: user.optional(),
      timestamp: timestamp.optional(),
    }),
  });

export const connection = z.object({
  action: openSet('connected', 'disconnected').optional(),
  appInfo: z
    .object({
      version: z.string(),
      apiVersion: z.string(),
      origin: z.string(),
      uts: timestamp,
      clientIp: z.string(),
    })
    .partial()
    .optional(),
  platform: z.string().optional(),
  userAgent: z.string().optional(),
  connectedAt: timestamp.optional(),
});

export const occupant = z.object({
  uid: id.optional(),
  name: z.string().optional(),
  joined_at: numberLike.optional(),
  left_at: numberLike.optional(),
  audio_call: booleanLike.optional(),
});

export const initialConfig = z
  .object({
    is_video_muted: booleanLike,
    start_recording_on_call_start: booleanLike,
    call_version: numberLike,
    is_audio_muted: booleanLike,
    sdk: z.string(),
    mode: z.string(),
    platform: z.string(),
    is_audio_only: booleanLike,
  })
  .partial();

export const userRef = z.union([id, user]);
export const looseRecord = json;

export type User = z.infer<typeof user>;
export type Group = z.infer<typeof group>;
export type Message = z.infer<typeof message>;
export type CallEntity = z.infer<typeof callEntity>;
export type Reaction = z.infer<typeof reaction>;
export type Occupant = z.infer<typeof occupant>;
export type Connection = z.infer<typeof connection>;
