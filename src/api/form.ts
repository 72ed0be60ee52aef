/**
 * Interactive message form elements and button actions (spec 2.8), as zod schemas.
 *
 * Rules: every element has `elementType` and `elementId`; `optional` defaults to true; `label` is required on
 * a checkbox and `text` on a label; a button has its text and an action; `urlNavigation` needs a valid URL and
 * `deepLinkAction` a URL; `customAction` needs nothing else; `timezoneCode` is an IANA zone. Unknown fields
 * are kept. An element type this version does not know is accepted as it is (the service adds types), but
 * typed apart as `UnknownFormField`: `isKnownFormField(field)` separates the two, after which narrowing on
 * `elementType` is exact (TypeScript cannot type "any string but these eight" for the unknown ones).
 */
import { z } from 'zod';

/** `z.string()` whose message says the field is required when it is missing. */
const required = (name: string) =>
  z.string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a string`) });

const nonEmpty = (name: string) => required(name).min(1, `${name} must not be empty`);

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === 'http:' || protocol === 'https:';
}
const httpUrl = (name: string) => required(name).refine(isHttpUrl, `${name} must be a valid http(s) URL`);

/**
 * An IANA zone name (`Europe/Paris`, `UTC`), not an offset (`+01:00`), that this runtime knows.
 *
 * @example
 * ```ts
 * import { isIanaTimeZone } from 'chat-webhooks/api';
 *
 * isIanaTimeZone('Europe/Paris'); // true
 * isIanaTimeZone('+01:00'); // false: an offset, not a zone
 * ```
 */
export function isIanaTimeZone(zone: string): boolean {
  // Node 20's Intl refuses everything this pattern refuses, so there the pattern changes nothing; it is for a
  // newer V8, whose Intl takes an offset as a zone (this machine's Chromium takes '+01:00').
  if (!/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

// ---- button actions --------------------------------------------------------------------------------------

export const apiActionSchema = z.looseObject({
  actionType: z.literal('apiAction'),
  url: httpUrl('url').optional(),
  method: z.string().optional(),
  payload: z.record(z.string(), z.unknown()).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  dataKey: z.string().optional(),
});
export const urlNavigationActionSchema = z.looseObject({ actionType: z.literal('urlNavigation'), url: httpUrl('url') });
export const deepLinkActionSchema = z.looseObject({ actionType: z.literal('deepLinkAction'), url: nonEmpty('url') });
export const customActionSchema = z.looseObject({ actionType: z.literal('customAction') });

export const buttonActionSchema = z.discriminatedUnion(
  'actionType',
  [apiActionSchema, urlNavigationActionSchema, deepLinkActionSchema, customActionSchema],
  { error: 'actionType must be one of apiAction, urlNavigation, deepLinkAction, customAction' },
);

export type ApiAction = z.infer<typeof apiActionSchema>;
export type UrlNavigationAction = z.infer<typeof urlNavigationActionSchema>;
export type DeepLinkAction = z.infer<typeof deepLinkActionSchema>;
export type CustomAction = z.infer<typeof customActionSchema>;
export type ButtonAction = z.infer<typeof buttonActionSchema>;

// ---- elements --------------------------------------------------------------------------------------------

const element = <T extends string>(type: T) => ({ elementType: z.literal(type), elementId: nonEmpty('elementId') });
const optionalFlag = z.boolean().default(true);
export const formOptionSchema = z.looseObject({ value: required('value'), label: required('label') });
export type FormOption = z.infer<typeof formOptionSchema>;

/** Fields shared by dropdown, radio and singleSelect: one value chosen among `options`. */
const singleChoice = { optional: optionalFlag, label: z.string().optional(), defaultValue: z.string().optional(), options: z.array(formOptionSchema).optional() };

/** A range without an end (or with an end that is no date) is open; one with both ends must not run backwards. */
function inOrder(range: { from?: string | undefined; to?: string | undefined }): boolean {
  return !(Date.parse(range.from ?? '') > Date.parse(range.to ?? ''));
}

const dateString = (name: string) => z.string().refine((text) => !Number.isNaN(Date.parse(text)), `${name} must be a date`);

export const labelFieldSchema = z.looseObject({ ...element('label'), text: required('text') });
export const textInputFieldSchema = z.looseObject({
  ...element('textInput'),
  optional: optionalFlag,
  label: z.string().optional(),
  maxLines: z.number().int().positive().optional(),
  placeholder: z.looseObject({ text: required('placeholder.text') }).optional(),
});
export const buttonFieldSchema = z.looseObject({
  ...element('button'),
  buttonText: required('buttonText'),
  disableAfterInteracted: z.boolean().optional(),
  action: buttonActionSchema,
});
export const checkboxFieldSchema = z.looseObject({
  ...element('checkbox'),
  optional: optionalFlag,
  label: required('label'),
  defaultValue: z.array(z.string()).optional(),
  options: z.array(formOptionSchema).optional(),
});
export const dropdownFieldSchema = z.looseObject({ ...element('dropdown'), ...singleChoice });
export const radioFieldSchema = z.looseObject({ ...element('radio'), ...singleChoice });
export const singleSelectFieldSchema = z.looseObject({ ...element('singleSelect'), ...singleChoice });
export const dateTimeFieldSchema = z
  .looseObject({
    ...element('dateTime'),
    optional: optionalFlag,
    label: z.string().optional(),
    defaultValue: z.string().optional(),
    dateTimeFormat: z.string().optional(),
    mode: z.custom<'date' | 'time' | 'dateTime' | (string & {})>((value) => typeof value === 'string', 'mode must be a string').optional(),
    timezoneCode: z.string().refine(isIanaTimeZone, 'timezoneCode must be an IANA time zone such as "Europe/Paris"').optional(),
    from: dateString('from').optional(),
    to: dateString('to').optional(),
  })
  .refine(inOrder, {
    message: 'from must not be after to',
    path: ['to'],
  });

/** The element types this version knows. */
export const formElementTypes = ['label', 'textInput', 'button', 'checkbox', 'dropdown', 'radio', 'singleSelect', 'dateTime'] as const;
export type KnownFormElementType = (typeof formElementTypes)[number];

/** A known element, strictly: an unknown `elementType` is an error here. */
export const knownFormFieldSchema = z.discriminatedUnion('elementType', [
  labelFieldSchema,
  textInputFieldSchema,
  buttonFieldSchema,
  checkboxFieldSchema,
  dropdownFieldSchema,
  radioFieldSchema,
  singleSelectFieldSchema,
  dateTimeFieldSchema,
]);

/** An element of a type added after this version: only `elementType` and `elementId` are checked. */
export const unknownFormFieldSchema = z.looseObject({ elementType: nonEmpty('elementType'), elementId: nonEmpty('elementId') });

export type LabelField = z.infer<typeof labelFieldSchema>;
export type TextInputField = z.infer<typeof textInputFieldSchema>;
export type ButtonField = z.infer<typeof buttonFieldSchema>;
export type CheckboxField = z.infer<typeof checkboxFieldSchema>;
export type DropdownField = z.infer<typeof dropdownFieldSchema>;
export type RadioField = z.infer<typeof radioFieldSchema>;
export type SingleSelectField = z.infer<typeof singleSelectFieldSchema>;
export type DateTimeField = z.infer<typeof dateTimeFieldSchema>;
export type KnownFormField = z.infer<typeof knownFormFieldSchema>;
/** An element of a type this version does not know, kept as sent. */
export type UnknownFormField = { elementType: string; elementId: string; [field: string]: unknown };
export type FormField = KnownFormField | UnknownFormField;
/** What the schemas accept for a known element (`optional` may be left out). */
export type FormFieldInput = z.input<typeof knownFormFieldSchema>;

const isKnownType = (type: unknown): type is KnownFormElementType => (formElementTypes as readonly unknown[]).includes(type);

/**
 * Whether a parsed element is of a type this version knows (narrows `FormField`).
 *
 * @example
 * ```ts
 * import { formFieldSchema, isKnownFormField } from 'chat-webhooks/api';
 *
 * const field = formFieldSchema.parse({ elementType: 'textInput', elementId: 'name', label: 'Name' });
 * if (isKnownFormField(field)) console.log(field.elementType);
 * else console.log('an element type this version does not know');
 * ```
 */
export function isKnownFormField(field: FormField): field is KnownFormField {
  return isKnownType(field.elementType);
}

/**
 * Any form element: a known type is checked by its own rules (issues keep their paths, such as `label`), any
 * other type is accepted as an `UnknownFormField`.
 */
export const formFieldSchema = z.unknown().transform((value, context): FormField => {
  const type = (value as { elementType?: unknown } | null | undefined)?.elementType;
  const schema = isKnownType(type) ? knownFormFieldSchema : unknownFormFieldSchema;
  const result = schema.safeParse(value);
  if (result.success) return result.data as FormField;
  for (const issue of result.error.issues) context.addIssue({ ...issue });
  return z.NEVER;
});

/** The `formFields` of an interactive message: elements whose `elementId`s are unique. */
export const formFieldsSchema = z.array(formFieldSchema).superRefine((fields, context) => {
  const seen = new Set<string>();
  fields.forEach((field, index) => {
    if (seen.has(field.elementId)) context.addIssue({ code: 'custom', path: [index, 'elementId'], message: `elementId "${field.elementId}" is used twice` });
    seen.add(field.elementId);
  });
});
