/** A form value as Stripe's API takes it: nested objects and lists become bracketed keys. */
export type FormValue = string | number | boolean | undefined | FormValue[] | { [key: string]: FormValue };

/**
 * `application/x-www-form-urlencoded` with Stripe's nesting: `{line_items: [{price: 'p'}]}`
 * becomes `line_items[0][price]=p`. Undefined values are left out; keys keep their order.
 */
export function stripeForm(fields: Record<string, FormValue>): string {
  const pairs: string[] = [];
  const add = (key: string, value: FormValue) => {
    if (value === undefined) return;
    if (Array.isArray(value)) value.forEach((item, i) => add(`${key}[${i}]`, item));
    else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) add(`${key}[${k}]`, v);
    else pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  };
  for (const [key, value] of Object.entries(fields)) add(key, value);
  return pairs.join('&');
}
