import { describe, expect, it } from 'vitest';
import { UriTemplate } from '../src/index.js';

describe('UriTemplate', () => {
  it('takes a simple variable out of a path segment', () => {
    const template = new UriTemplate('test://template/{id}/data');
    expect(template.variables).toEqual(['id']);
    expect(template.isTemplate).toBe(true);
    expect(template.match('test://template/123/data')).toEqual({ id: '123' });
    expect(template.match('test://template/report.v2/data')).toEqual({ id: 'report.v2' });
  });

  it('refuses URIs the template does not describe', () => {
    const template = new UriTemplate('test://template/{id}/data');
    expect(template.match('test://template/1/2/data')).toBeUndefined();
    expect(template.match('test://template//data')).toBeUndefined();
    expect(template.match('test://template/1/data/more')).toBeUndefined();
    expect(template.match('other://template/1/data')).toBeUndefined();
  });

  it('decodes percent-encoded values and refuses broken encodings', () => {
    const template = new UriTemplate('file:///{name}');
    expect(template.match('file:///hello%20world.txt')).toEqual({ name: 'hello world.txt' });
    expect(template.match('file:///bad%E0%A4')).toBeUndefined();
  });

  it('lets a reserved expansion span slashes', () => {
    const template = new UriTemplate('repo://{owner}/{+path}');
    expect(template.match('repo://ada/src/lib/index.ts')).toEqual({ owner: 'ada', path: 'src/lib/index.ts' });
  });

  it('reads path, label and query expressions with several names', () => {
    expect(new UriTemplate('api://x{/a,b}').match('api://x/1/2')).toEqual({ a: '1', b: '2' });
    expect(new UriTemplate('api://file{.ext}').match('api://file.json')).toEqual({ ext: 'json' });
    const query = new UriTemplate('search://items{?q,page}');
    expect(query.match('search://items?page=2&q=red%20shoes')).toEqual({ q: 'red shoes', page: '2' });
    expect(query.match('search://items')).toEqual({});
    expect(query.match('search://items?other=1')).toEqual({});
    expect(new UriTemplate('search://items?fixed=1{&q}').match('search://items?fixed=1&q=a')).toEqual({ q: 'a' });
  });

  it('treats a URI without expressions as one exact URI', () => {
    const template = new UriTemplate('test://static-text');
    expect(template.isTemplate).toBe(false);
    expect(template.match('test://static-text')).toEqual({});
    expect(template.match('test://static-textX')).toBeUndefined();
  });

  it('escapes the literal parts', () => {
    expect(new UriTemplate('a.b://{x}').match('aXb://1')).toBeUndefined();
    expect(new UriTemplate('a+b://(x)/{x}').match('a+b://(x)/1')).toEqual({ x: '1' });
  });

  it.each(['test://{id', 'test://id}', 'test://{id*}', 'test://{id:3}', 'test://{}', 'test://{a b}'])(
    'refuses the template %s with a message naming it',
    (text) => {
      expect(() => new UriTemplate(text)).toThrow(new RegExp(`URI template '${text.replace(/[{}*+?.()]/g, '\\$&')}'`));
    },
  );
});
