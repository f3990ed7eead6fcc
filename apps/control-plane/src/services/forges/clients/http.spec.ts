import { describe, expect, it } from 'vitest';
import { allPages, ForgeError, hide, nextLink, sameOrigin } from './http.js';

describe('forge pagination', () => {
  it('reads the rel="next" address of a Link header, wherever it is in the list', () => {
    expect(nextLink('<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"')).toBe('https://api.github.com/x?page=2');
    expect(nextLink('<https://g/x?page=1>; rel="prev", <https://g/x?page=3>; rel="next"')).toBe('https://g/x?page=3');
    expect(nextLink('<https://g/x?page=5>; rel="last"')).toBeNull();
    expect(nextLink(undefined)).toBeNull();
  });

  it('follows a next page only on the API origin: a forge cannot send the credentials elsewhere', async () => {
    expect(sameOrigin('/api/v1/x?page=2', 'https://git.example.com/api/v1', 'forgeD')).toBe('https://git.example.com/api/v1/x?page=2');
    expect(() => sameOrigin('https://evil.example/x?page=2', 'https://api.github.com', 'forgeA (GitHub)')).toThrow(ForgeError);
    const asked: string[] = [];
    const pages: Record<string, { items: number[]; next: string | null }> = {
      'https://api.example/r?page=1': { items: [1, 2], next: 'https://api.example/r?page=2' },
      'https://api.example/r?page=2': { items: [3], next: 'http://169.254.169.254/latest' },
    };
    const listing = allPages('https://api.example/r?page=1', async (url) => (asked.push(url), pages[url]!), 'https://api.example', 'forgeX');
    await expect(listing).rejects.toThrow('forgeX gave a next page on another address; refused');
    expect(asked).toEqual(['https://api.example/r?page=1', 'https://api.example/r?page=2']);
  });

  it('stops after a bounded number of pages', async () => {
    let n = 0;
    const endless = allPages('https://api.example/r', async () => ({ items: [n++], next: `https://api.example/r?page=${n}` }), 'https://api.example', 'forgeX');
    await expect(endless).rejects.toThrow('forgeX has more than 100 pages of results');
  });

  it('hides every credential from a message', () => {
    expect(hide('refused token abc123 and abc123', ['abc123', 'x'])).toBe('refused token *** and ***');
  });
});
