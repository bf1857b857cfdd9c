import { describe, expect, it } from 'vitest';
import { allowList, destinationProblem, egressSummary } from './egress';

describe('egress', () => {
  it('prints a policy in one line, as the CLI does', () => {
    expect(egressSummary({ mode: 'default' })).toBe('default');
    expect(egressSummary({ mode: 'closed', allow: ['10.0.0.0/8', '10.1.2.3:3128'] })).toBe('closed allow 10.0.0.0/8,10.1.2.3:3128');
    expect(egressSummary(null)).toBe('-');
  });
  it('reads the allow list and names a bad destination', () => {
    expect(allowList(' 10.0.0.0/8, 10.1.2.3:3128\n[fd00::1]:443 ')).toEqual(['10.0.0.0/8', '10.1.2.3:3128', '[fd00::1]:443']);
    for (const ok of ['10.0.0.0/8', '10.1.2.3', '10.1.2.3:3128', 'fd00::/8', '[fd00::1]:443']) expect(destinationProblem(ok)).toBeNull();
    expect(destinationProblem('metadata.internal')).toContain('"metadata.internal" is not an address');
    // A port range gets the server's reason, not the generic shape message.
    for (const range of ['10.0.0.1:8000-8080', '[fd00::1]:1-2']) {
      expect(destinationProblem(range)).toContain('port ranges are not supported');
      expect(destinationProblem(range)).not.toContain('is not an address');
    }
  });
});
