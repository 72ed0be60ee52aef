/** Form elements and button actions (spec 2.8): every required field of every element, defaults, builders. */
import { describe, expect, it } from 'vitest';
import {
  ValidationError,
  buttonActionSchema,
  form,
  formFieldSchema,
  formFieldsSchema,
  isIanaTimeZone,
  isKnownFormField,
  knownFormFieldSchema,
} from '../../src/api/index.js';

const action = { actionType: 'urlNavigation', url: 'https://example.com/orders/1' };
const options = [{ value: 'a', label: 'A' }, { value: 'b', label: 'B' }];

/** A complete valid element of every known type. */
const complete: Record<string, Record<string, unknown>> = {
  label: { elementType: 'label', elementId: 'l1', text: 'Choose a slot' },
  textInput: { elementType: 'textInput', elementId: 't1', label: 'Name', maxLines: 2, placeholder: { text: 'Jane' }, optional: false },
  button: { elementType: 'button', elementId: 'b1', buttonText: 'Open', disableAfterInteracted: true, action },
  checkbox: { elementType: 'checkbox', elementId: 'c1', label: 'Toppings', defaultValue: ['a'], options },
  dropdown: { elementType: 'dropdown', elementId: 'd1', label: 'Size', defaultValue: 'a', options },
  radio: { elementType: 'radio', elementId: 'r1', label: 'Colour', defaultValue: 'b', options },
  singleSelect: { elementType: 'singleSelect', elementId: 's1', label: 'Plan', defaultValue: 'a', options },
  dateTime: {
    elementType: 'dateTime', elementId: 'dt1', label: 'When', defaultValue: '2026-12-01', dateTimeFormat: 'yyyy-MM-dd',
    mode: 'date', timezoneCode: 'Asia/Kolkata', from: '2026-11-01', to: '2026-12-31',
  },
};

/** The fields the spec requires, per element type. */
const requiredFields: Record<string, string[]> = {
  label: ['elementType', 'elementId', 'text'],
  textInput: ['elementType', 'elementId'],
  button: ['elementType', 'elementId', 'buttonText', 'action'],
  checkbox: ['elementType', 'elementId', 'label'],
  dropdown: ['elementType', 'elementId'],
  radio: ['elementType', 'elementId'],
  singleSelect: ['elementType', 'elementId'],
  dateTime: ['elementType', 'elementId'],
};

const without = (value: Record<string, unknown>, field: string) => Object.fromEntries(Object.entries(value).filter(([key]) => key !== field));
const issuePaths = (value: unknown) => formFieldSchema.safeParse(value).error?.issues.map((issue) => issue.path.join('.'));

describe('formFieldSchema', () => {
  it.each(Object.entries(complete))('accepts a complete %s and keeps every field', (_type, element) => {
    const parsed = formFieldSchema.parse({ ...element, extra: 'kept' });
    expect(parsed).toMatchObject({ ...element, extra: 'kept' });
    expect(knownFormFieldSchema.safeParse(element).success).toBe(true);
  });

  const cases = Object.entries(requiredFields).flatMap(([type, fields]) => fields.map((field) => [type, field] as const));
  it.each(cases)('refuses a %s without %s, at that path', (type, field) => {
    const result = formFieldSchema.safeParse(without(complete[type]!, field));
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((issue) => issue.path.join('.'))).toContain(field);
  });

  it.each(Object.entries(requiredFields))('accepts a %s with only its required fields', (type, fields) => {
    const minimal = Object.fromEntries(fields.map((field) => [field, complete[type]![field]]));
    expect(formFieldSchema.safeParse(minimal).success).toBe(true);
  });

  it.each(['textInput', 'checkbox', 'dropdown', 'radio', 'singleSelect', 'dateTime'])('defaults optional to true on %s, keeps false', (type) => {
    const element = without(complete[type]!, 'optional');
    expect(formFieldSchema.parse(element)).toMatchObject({ optional: true });
    expect(formFieldSchema.parse({ ...element, optional: false })).toMatchObject({ optional: false });
    expect(issuePaths({ ...element, optional: 'yes' })).toEqual(['optional']);
  });

  it('refuses empty ids and wrong types where the spec gives them', () => {
    expect(issuePaths({ ...complete.label, elementId: '' })).toEqual(['elementId']);
    expect(issuePaths({ ...complete.textInput, maxLines: 1.5 })).toEqual(['maxLines']);
    expect(issuePaths({ ...complete.textInput, placeholder: 'Jane' })).toEqual(['placeholder']);
    expect(issuePaths({ ...complete.checkbox, defaultValue: 'a' })).toEqual(['defaultValue']);
    expect(issuePaths({ ...complete.dropdown, options: [{ value: 'a' }] })).toEqual(['options.0.label']);
    expect(issuePaths({ ...complete.button, action: { actionType: 'urlNavigation' } })).toEqual(['action.url']);
  });

  it.each(['Europe/Paris', 'UTC', 'America/Argentina/Buenos_Aires', 'Asia/Calcutta'])('accepts the IANA zone %s', (zone) => {
    expect(formFieldSchema.safeParse({ ...complete.dateTime, timezoneCode: zone }).success).toBe(true);
  });

  it.each(['+01:00', 'Mars/Olympus_Mons', 'Paris', '', 'Europe/'])('refuses %j as a timezoneCode', (zone) => {
    expect(issuePaths({ ...complete.dateTime, timezoneCode: zone })).toEqual(['timezoneCode']);
  });

  it('refuses dates that do not parse, and a range that ends before it starts', () => {
    expect(issuePaths({ ...complete.dateTime, from: 'soon' })).toEqual(['from']);
    expect(issuePaths({ ...complete.dateTime, from: '2027-01-01', to: '2026-01-01' })).toEqual(['to']);
  });

  it('accepts an element type it does not know, as it is, but still wants its elementId', () => {
    const rating = { elementType: 'rating', elementId: 'stars', max: 5 };
    const parsed = formFieldSchema.parse(rating);
    expect(parsed).toEqual(rating);
    expect(isKnownFormField(parsed)).toBe(false);
    expect(isKnownFormField(formFieldSchema.parse(complete.label))).toBe(true);
    expect(issuePaths({ elementType: 'rating' })).toEqual(['elementId']);
    expect(knownFormFieldSchema.safeParse(rating).success).toBe(false);
  });

  it('refuses what is not an element', () => {
    expect(formFieldSchema.safeParse(null).success).toBe(false);
    expect(issuePaths({ elementId: 'x' })).toEqual(['elementType']);
  });
});

describe('what each refusal says', () => {
  const texts = (value: unknown) => formFieldSchema.safeParse(value).error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  const button = (action: unknown) => ({ elementType: 'button', elementId: 'b', buttonText: 'Go', action });

  it.each([
    [{ elementType: 'label', elementId: 'l' }, ['text: text is required']],
    [{ elementType: 'label', elementId: 'l', text: 5 }, ['text: text must be a string']],
    [{ elementType: 'label', text: 'x' }, ['elementId: elementId is required']],
    [{ elementType: 'label', elementId: '', text: 'x' }, ['elementId: elementId must not be empty']],
    [{ elementType: 'textInput', elementId: 't', placeholder: {} }, ['placeholder.text: placeholder.text is required']],
    [{ elementType: 'button', elementId: 'b', action: { actionType: 'customAction' } }, ['buttonText: buttonText is required']],
    [button({ actionType: 'nope' }), ['action.actionType: actionType must be one of apiAction, urlNavigation, deepLinkAction, customAction']],
    [button({ actionType: 'urlNavigation', url: 'x' }), ['action.url: url must be a valid http(s) URL']],
    [button({ actionType: 'urlNavigation' }), ['action.url: url is required']],
    [button({ actionType: 'deepLinkAction', url: '' }), ['action.url: url must not be empty']],
    [button({ actionType: 'apiAction', url: 'ftp://x' }), ['action.url: url must be a valid http(s) URL']],
    [{ elementType: 'checkbox', elementId: 'c' }, ['label: label is required']],
    [{ elementType: 'dropdown', elementId: 'd', options: [{}] }, ['options.0.value: value is required', 'options.0.label: label is required']],
    [{ elementType: 'radio', elementId: 'r', options: [{ value: 1, label: 2 }] }, ['options.0.value: value must be a string', 'options.0.label: label must be a string']],
    [
      { elementType: 'dateTime', elementId: 'd', mode: 5, timezoneCode: '+01:00', from: 'x', to: 'y' },
      [
        'mode: mode must be a string',
        'timezoneCode: timezoneCode must be an IANA time zone such as "Europe/Paris"',
        'from: from must be a date',
        'to: to must be a date',
      ],
    ],
    [{ elementType: 'dateTime', elementId: 'd', from: '2026-01-02', to: '2026-01-01' }, ['to: from must not be after to']],
    [{ elementType: 'rating' }, ['elementId: elementId is required']],
    [{ elementType: '', elementId: '' }, ['elementType: elementType must not be empty', 'elementId: elementId must not be empty']],
    [{ elementId: 'x' }, ['elementType: elementType is required']],
    [undefined, [': Invalid input: expected object, received undefined']],
    [null, [': Invalid input: expected object, received null']],
  ])('%j: %j', (value, expected) => {
    expect(texts(value)).toEqual(expected);
  });

  it('takes a range that starts and ends at the same time, and any mode written as a string', () => {
    expect(texts({ elementType: 'dateTime', elementId: 'd', from: '2026-01-01', to: '2026-01-01', mode: 'week' })).toBeUndefined();
  });

  it('reports a repeated elementId as a custom issue at its index', () => {
    const label = (text: string) => ({ elementType: 'label', elementId: 'a', text });
    expect(formFieldsSchema.safeParse([label('x'), label('y')]).error?.issues).toEqual([
      { code: 'custom', path: [1, 'elementId'], message: 'elementId "a" is used twice' },
    ]);
  });

  it('isIanaTimeZone answers false (not an error, not undefined) for an unknown zone', () => {
    expect(isIanaTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isIanaTimeZone('+01:00')).toBe(false);
    expect(isIanaTimeZone('Europe/Paris')).toBe(true);
  });
});

describe('buttonActionSchema', () => {
  it.each([
    [{ actionType: 'urlNavigation', url: 'https://example.com' }],
    [{ actionType: 'urlNavigation', url: 'http://example.com/a?b=c' }],
    [{ actionType: 'deepLinkAction', url: 'myapp://orders/1' }],
    [{ actionType: 'customAction' }],
    [{ actionType: 'customAction', anything: 1 }],
    [{ actionType: 'apiAction' }],
    [{ actionType: 'apiAction', url: 'https://api.example/x', method: 'POST', payload: { a: 1 }, headers: { 'x-a': 'b' }, dataKey: 'k' }],
  ])('accepts %j', (value) => {
    expect(buttonActionSchema.parse(value)).toEqual(value);
  });

  it.each([
    [{ actionType: 'urlNavigation' }, 'url'],
    [{ actionType: 'urlNavigation', url: 'not a url' }, 'url'],
    [{ actionType: 'urlNavigation', url: 'javascript:alert(1)' }, 'url'],
    [{ actionType: 'urlNavigation', url: '/relative' }, 'url'],
    [{ actionType: 'deepLinkAction' }, 'url'],
    [{ actionType: 'deepLinkAction', url: '' }, 'url'],
    [{ url: 'https://example.com' }, 'actionType'],
    [{ actionType: 'teleport' }, 'actionType'],
    [{ actionType: 'apiAction', url: 'nope' }, 'url'],
    [{ actionType: 'apiAction', headers: { a: 1 } }, 'headers.a'],
  ])('refuses %j at %s', (value, path) => {
    const result = buttonActionSchema.safeParse(value);
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((issue) => issue.path.join('.'))).toContain(path);
  });
});

describe('form builders', () => {
  it('build valid elements, filling in elementType and optional', () => {
    expect(form.label({ elementId: 'l', text: 'Hello' })).toEqual({ elementType: 'label', elementId: 'l', text: 'Hello' });
    expect(form.textInput({ elementId: 'name', label: 'Name', placeholder: 'Jane' })).toEqual({
      elementType: 'textInput', elementId: 'name', label: 'Name', optional: true, placeholder: { text: 'Jane' },
    });
    expect(form.button({ elementId: 'go', buttonText: 'Open', action: form.urlNavigation('https://example.com') })).toEqual({
      elementType: 'button', elementId: 'go', buttonText: 'Open', action: { actionType: 'urlNavigation', url: 'https://example.com' },
    });
    expect(form.checkbox({ elementId: 'c', label: 'Pick', options: ['x', form.option('y', 'Why')] })).toEqual({
      elementType: 'checkbox', elementId: 'c', label: 'Pick', optional: true, options: [{ value: 'x', label: 'x' }, { value: 'y', label: 'Why' }],
    });
    expect(form.dropdown({ elementId: 'd', options: ['s', 'm'] }).options).toHaveLength(2);
    expect(form.radio({ elementId: 'r', label: 'R', optional: false }).optional).toBe(false);
    expect(form.singleSelect({ elementId: 's' }).elementType).toBe('singleSelect');
    expect(form.dateTime({ elementId: 'when', mode: 'date', timezoneCode: 'Europe/Paris' })).toMatchObject({ elementType: 'dateTime', optional: true });
  });

  it('build every action', () => {
    expect(form.apiAction('https://api.example/x', { method: 'POST', payload: { a: 1 } })).toEqual({
      actionType: 'apiAction', url: 'https://api.example/x', method: 'POST', payload: { a: 1 },
    });
    expect(form.apiAction({ url: 'https://api.example/y', method: 'GET' })).toEqual({ actionType: 'apiAction', url: 'https://api.example/y', method: 'GET' });
    expect(() => form.apiAction({ url: 'nope' })).toThrow(ValidationError);
    expect(form.deepLinkAction('myapp://x')).toEqual({ actionType: 'deepLinkAction', url: 'myapp://x' });
    expect(form.customAction()).toEqual({ actionType: 'customAction' });
    expect(form.customAction({ name: 'open-cart' })).toEqual({ actionType: 'customAction', name: 'open-cart' });
  });

  it.each([
    ['urlNavigation', () => form.urlNavigation('example.com'), 'url'],
    ['deepLinkAction', () => form.deepLinkAction(''), 'url'],
    ['label', () => form.label({ elementId: 'l' } as never), 'text'],
    ['checkbox', () => form.checkbox({ elementId: 'c' } as never), 'label'],
    ['button', () => form.button({ elementId: 'b', buttonText: 'x', action: { actionType: 'urlNavigation', url: 'ftp://x' } }), 'action.url'],
    ['textInput', () => form.textInput({ elementId: '' }), 'elementId'],
    ['dateTime', () => form.dateTime({ elementId: 'd', timezoneCode: 'CET+1' }), 'timezoneCode'],
    ['dropdown', () => form.dropdown({ elementId: '' }), 'elementId'],
    ['radio', () => form.radio({ elementId: 'r', options: [{ value: 'a' } as never] }), 'options.0.label'],
    ['singleSelect', () => form.singleSelect({ elementId: 's', defaultValue: 1 as never }), 'defaultValue'],
    ['apiAction', () => form.apiAction('nope'), 'url'],
    ['fields', () => form.fields(form.label({ elementId: 'x', text: 'a' }), form.label({ elementId: 'x', text: 'b' })), '1.elementId'],
  ])('form.%s throws a ValidationError at the call naming the field', (name, call, path) => {
    try {
      call();
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toContain(`form.${name}`);
      expect((error as ValidationError).issues.map((issue) => issue.path.join('.'))).toContain(path);
    }
  });

  it('fields() checks a whole form, refusing duplicate elementIds', () => {
    const name = form.textInput({ elementId: 'name', label: 'Name' });
    expect(form.fields(name, form.label({ elementId: 'hint', text: 'x' }))).toHaveLength(2);
    expect(() => form.fields(name, name)).toThrow(/elementId "name" is used twice/);
    expect(formFieldsSchema.safeParse([complete.label, { elementType: 'label', elementId: 'l1', text: 'again' }]).error?.issues[0]?.path).toEqual([1, 'elementId']);
  });
});
