import { describe, expect, it } from 'vitest';
import { ApiError } from './api';
import { isBusy } from './terminate';

describe('terminating a session', () => {
  it('knows the refusal for a running commit', () => {
    expect(isBusy(new ApiError(409, 'The session is being committed.', 'wait', 'https://bai.local/problems/session-busy'))).toBe(true);
    expect(isBusy(new ApiError(409, 'Conflict', 'x', 'about:blank'))).toBe(false);
    expect(isBusy(new ApiError(404, 'Not found', 'x', 'session-busy'))).toBe(false);
    expect(isBusy(new Error('x'))).toBe(false);
  });
});
