/**
 * `form`: builders for interactive message elements and button actions. Each returns a value its schema
 * accepts (with defaults filled in, `optional: true`) or throws a `ValidationError` at the call, naming the
 * element and the field.
 *
 *   form.textInput({ elementId: 'name', label: 'Your name' })
 *   form.button({ elementId: 'go', buttonText: 'Open', action: form.urlNavigation('https://example.com') })
 */
import type { z } from 'zod';
import { validationError } from './errors.js';
import {
  type ApiAction,
  type ButtonAction,
  type ButtonField,
  type CheckboxField,
  type CustomAction,
  type DateTimeField,
  type DeepLinkAction,
  type DropdownField,
  type FormField,
  type FormOption,
  type LabelField,
  type RadioField,
  type SingleSelectField,
  type TextInputField,
  type UrlNavigationAction,
  apiActionSchema,
  buttonFieldSchema,
  checkboxFieldSchema,
  customActionSchema,
  dateTimeFieldSchema,
  deepLinkActionSchema,
  dropdownFieldSchema,
  formFieldsSchema,
  labelFieldSchema,
  radioFieldSchema,
  singleSelectFieldSchema,
  textInputFieldSchema,
  urlNavigationActionSchema,
} from './form.js';

/** The declared fields of a loose object type, without its index signature. */
type Declared<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
/** A builder's argument: the element's declared input fields, `elementType` supplied by the builder. */
type Args<S extends z.ZodType> = Omit<Declared<z.input<S>>, 'elementType'>;
/** Options may be written as plain strings: `'red'` is `{ value: 'red', label: 'red' }`. */
type WithOptions<T> = Omit<T, 'options'> & { options?: ReadonlyArray<FormOption | string> };

function build<S extends z.ZodType>(schema: S, what: string, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(`form.${what}`, result.error);
  return result.data;
}

const withElementType = (elementType: string, args: object, extra: Record<string, unknown> = {}) => ({ elementType, ...args, ...extra });

function choices(args: { options?: ReadonlyArray<FormOption | string> }): Record<string, unknown> {
  return args.options === undefined ? {} : { options: args.options.map((item) => (typeof item === 'string' ? option(item) : item)) };
}

function option(value: string, label: string = value): FormOption {
  return { value, label };
}

export const form = {
  label: (args: Args<typeof labelFieldSchema>): LabelField => build(labelFieldSchema, 'label', withElementType('label', args)),

  textInput: (args: Omit<Args<typeof textInputFieldSchema>, 'placeholder'> & { placeholder?: string | { text: string } }): TextInputField =>
    build(
      textInputFieldSchema,
      'textInput',
      withElementType('textInput', args, typeof args.placeholder === 'string' ? { placeholder: { text: args.placeholder } } : {}),
    ),

  button: (args: Omit<Args<typeof buttonFieldSchema>, 'action'> & { action: ButtonAction }): ButtonField =>
    build(buttonFieldSchema, 'button', withElementType('button', args)),

  checkbox: (args: WithOptions<Args<typeof checkboxFieldSchema>>): CheckboxField =>
    build(checkboxFieldSchema, 'checkbox', withElementType('checkbox', args, choices(args))),

  dropdown: (args: WithOptions<Args<typeof dropdownFieldSchema>>): DropdownField =>
    build(dropdownFieldSchema, 'dropdown', withElementType('dropdown', args, choices(args))),

  radio: (args: WithOptions<Args<typeof radioFieldSchema>>): RadioField =>
    build(radioFieldSchema, 'radio', withElementType('radio', args, choices(args))),

  singleSelect: (args: WithOptions<Args<typeof singleSelectFieldSchema>>): SingleSelectField =>
    build(singleSelectFieldSchema, 'singleSelect', withElementType('singleSelect', args, choices(args))),

  dateTime: (args: Args<typeof dateTimeFieldSchema>): DateTimeField => build(dateTimeFieldSchema, 'dateTime', withElementType('dateTime', args)),

  /** `{ value, label }` (the label defaults to the value). */
  option,

  /** Calls an HTTP API when the button is pressed: `apiAction(url, { method, … })` or `apiAction({ url, method, … })`. */
  apiAction: (url: string | Omit<Args<typeof apiActionSchema>, 'actionType'>, options: Omit<Args<typeof apiActionSchema>, 'url' | 'actionType'> = {}): ApiAction =>
    build(apiActionSchema, 'apiAction', typeof url === 'string' ? { actionType: 'apiAction', ...options, url } : { actionType: 'apiAction', ...url }),

  /** Opens a web page (an http(s) URL). */
  urlNavigation: (url: string): UrlNavigationAction => build(urlNavigationActionSchema, 'urlNavigation', { actionType: 'urlNavigation', url }),

  /** Opens a deep link into an app (`myapp://…`). */
  deepLinkAction: (url: string): DeepLinkAction => build(deepLinkActionSchema, 'deepLinkAction', { actionType: 'deepLinkAction', url }),

  /** Left to the client app to handle; extra fields travel with it. */
  customAction: (fields: Record<string, unknown> = {}): CustomAction =>
    build(
      customActionSchema,
      'customAction',
      { ...fields, actionType: 'customAction' },
    ),

  /** A whole `formFields` array, checked together (unique `elementId`s). */
  fields: (...elements: FormField[]): FormField[] => build(formFieldsSchema, 'fields', elements),
};
