import { describe, expect, expectTypeOf, it } from 'vitest';
import { api, buildUrl, problem, Reply, Schema } from './api';

describe('the API client', () => {
  it('fills path templates and queries', () => {
    expect(buildUrl('/folders/{id}/files', { id: 'abc' }, { path: '' })).toBe('/folders/abc/files?path=');
    expect(buildUrl('/folders/{id}/files', { id: 'abc' }, { path: 'a b/c' })).toBe('/folders/abc/files?path=a%20b%2Fc');
    expect(buildUrl('/admin/users/{email}', { email: 'a+b@x.io' })).toBe('/admin/users/a%2Bb%40x.io');
    expect(buildUrl('/session/{reference}/logs', { reference: 's1' }, { kernel_id: undefined })).toBe('/session/s1/logs');
    expect(() => buildUrl('/session/{reference}', {})).toThrow('no value for {reference}');
  });

  it('reads the message of a JSON problem', () => {
    expect(problem({ type: 'about:blank', title: 'Not found', msg: 'no such session' })).toEqual({ title: 'Not found', msg: 'no such session' });
    expect(problem('Bad Gateway')).toEqual({});
    expect(problem(null)).toEqual({});
    expect(problem({ msg: 3 })).toEqual({ msg: undefined, title: undefined });
    // A refused login answers Backend.AI's login shape, not a problem.
    expect(problem({ authenticated: false, data: { details: 'The email or the password is wrong.' } }).msg).toBe('The email or the password is wrong.');
  });

  it('types calls by the document', () => {
    // Checked by `tsc --noEmit` (part of `npm run build`); never called.
    const calls = async () => {
      const listing = await api('GET', '/folders/{id}/files', { path: { id: 'x' }, query: { path: '' } });
      expectTypeOf(listing).toEqualTypeOf<Schema<'Listing'>>();
      expectTypeOf(await api('GET', '/folders')).toEqualTypeOf<Schema<'Folder'>[]>();
      expectTypeOf<Reply<'DELETE', '/folders'>>().toEqualTypeOf<null>();
      await api('POST', '/session/{reference}/rename', { path: { reference: 'x' }, query: { name: 'n' } });
      // @ts-expect-error the path parameter is missing
      await api('GET', '/folders/{id}/files');
      // @ts-expect-error the body is required
      await api('DELETE', '/folders');
      // @ts-expect-error not a field of FolderId
      await api('DELETE', '/folders', { body: { folder: 'x' } });
      // @ts-expect-error the new name is a required query parameter
      await api('POST', '/session/{reference}/rename', { path: { reference: 'x' } });
      // @ts-expect-error no such path
      await api('GET', '/nope');
      // @ts-expect-error no GET on /session
      await api('GET', '/session');
    };
    expect(typeof calls).toBe('function');
  });
});
