/** The few fields that say what an event is about (ids, who, what), for one readable line. */

const RECORDS = ['message', 'call', 'reaction', 'group', 'user', 'resource', 'body', 'occupant'];
const FIELDS = ['id', 'guid', 'uid', 'messageId', 'sender', 'receiver', 'reaction', 'scope', 'name'];
const TEXT_LIMIT = 40;

type Fields = Record<string, unknown>;

const asObject = (value: unknown): Fields | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;

const shorten = (text: string) => (text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT - 1)}…` : text);

/** Ids are shown whole (their end is what differs); only message text is shortened. */
const scalar = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;

/** `[label, value]` pairs in a stable order; empty when the event has none of the usual fields. */
export function keyFields(event: Fields): [string, string][] {
  const data = asObject(event.data);
  if (!data) return [];
  const pairs: [string, string][] = [];
  const add = (label: string, value: unknown) => {
    const text = scalar(value);
    if (text !== undefined && !pairs.some(([existing]) => existing === label)) pairs.push([label, text]);
  };
  add('session', data.sessionId);
  for (const name of RECORDS) {
    const record = asObject(data[name]);
    if (!record) continue;
    // The record's own id is its kind (message 1421); other fields keep their names.
    add(name, record.id ?? record.guid ?? record.uid);
    for (const field of FIELDS.slice(3)) add(field, record[field]);
    const inner = asObject(record.data);
    add('action', inner?.action ?? record.action);
    if (typeof inner?.text === 'string') add('text', JSON.stringify(shorten(inner.text)));
  }
  for (const name of ['members', 'users']) {
    const keyed = asObject(data[name]);
    if (keyed) add(name, Object.keys(keyed).join(','));
  }
  add('by', asObject(data.by)?.uid);
  add('status', data.status);
  return pairs.slice(0, 7);
}

export const formatKeyFields = (pairs: [string, string][]) => pairs.map(([label, value]) => `${label}=${value}`).join(' ');
