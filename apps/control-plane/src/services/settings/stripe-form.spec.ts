import { describe, expect, it } from 'vitest';
import { stripeForm } from './stripe-form.js';

describe('stripeForm', () => {
  it('nests lists and objects in bracketed keys, in order, leaving out undefined values', () => {
    expect(
      stripeForm({
        mode: 'subscription',
        line_items: [{ price: 'price_1', quantity: 3 }],
        metadata: { organizationId: 'org 1&2' },
        customer: undefined,
        flag: true,
      }),
    ).toBe(
      'mode=subscription&line_items%5B0%5D%5Bprice%5D=price_1&line_items%5B0%5D%5Bquantity%5D=3' +
        '&metadata%5BorganizationId%5D=org%201%262&flag=true',
    );
  });
});
